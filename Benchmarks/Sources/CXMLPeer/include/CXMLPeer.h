#ifndef CXMLPEER_H
#define CXMLPEER_H

#include <stddef.h>
#include <stdint.h>

/// Parses `bytes` with libxml2's SAX2 interface and callbacks that only count
/// events: the raw speed of the XML parser under the XML plist decoder, with
/// the same options (no network, no error output, huge documents allowed).
/// Returns the number of elements plus text runs seen, or -1 when the
/// document is not well-formed.
long CXMLPeer_parseSAX2(const uint8_t *bytes, size_t count);

#endif
