#ifndef CMSGPACKPEER_H
#define CMSGPACKPEER_H

#include <stddef.h>
#include <stdint.h>

/// A MessagePack document unpacked once by msgpack-c, kept for repeated packing.
typedef struct CMsgPackPeerDocument CMsgPackPeerDocument;

/// Decodes `bytes` with msgpack-c the way its own users do: `msgpack_unpack` into a
/// fresh zone, which is then freed. Returns the number of bytes consumed, or 0 on failure.
size_t CMsgPackPeer_decode(const uint8_t *bytes, size_t count);

/// Unpacks `bytes` once and keeps the object tree for `CMsgPackPeer_encode`. NULL on failure.
CMsgPackPeerDocument *CMsgPackPeer_documentCreate(const uint8_t *bytes, size_t count);

/// Packs the document's object tree with `msgpack_pack_object` into a fresh sbuffer,
/// which is then freed. Returns the number of bytes written, or 0 on failure.
size_t CMsgPackPeer_encode(const CMsgPackPeerDocument *document);

/// Frees a document.
void CMsgPackPeer_documentDestroy(CMsgPackPeerDocument *document);

#endif
