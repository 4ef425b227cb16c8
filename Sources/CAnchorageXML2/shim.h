#ifndef CANCHORAGE_XML2_SHIM_H
#define CANCHORAGE_XML2_SHIM_H

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

/// xmlFree is a global function pointer (a macro under thread support); Swift cannot call it directly.
static inline void CAnchorageXML2_free(void *pointer) { xmlFree(pointer); }

/// The calling thread's structured error handler (`xmlStructuredError` is a per-thread macro).
static inline xmlStructuredErrorFunc CAnchorageXML2_structuredErrorHandler(void) { return xmlStructuredError; }

/// The context passed to the calling thread's structured error handler.
static inline void *CAnchorageXML2_structuredErrorContext(void) { return xmlStructuredErrorContext; }

/// `XML_SAX2_MAGIC`, the marker of a SAX2 handler, as an unsigned value.
static inline unsigned int CAnchorageXML2_sax2Magic(void) { return XML_SAX2_MAGIC; }

#endif
