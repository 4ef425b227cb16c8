#ifndef CANCHORAGE_XML2_SHIM_H
#define CANCHORAGE_XML2_SHIM_H

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

/// xmlFree is a global function pointer (a macro under thread support); Swift cannot call it directly.
static inline void CAnchorageXML2_free(void *pointer) { xmlFree(pointer); }

#endif
