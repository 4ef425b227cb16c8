#include "CXMLPeer.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlversion.h>
#include <string.h>

static void onStartElement(void *context, const xmlChar *localName, const xmlChar *prefix, const xmlChar *uri,
                           int namespaceCount, const xmlChar **namespaces, int attributeCount,
                           int defaultedCount, const xmlChar **attributes) {
    (void)localName; (void)prefix; (void)uri; (void)namespaceCount; (void)namespaces;
    (void)attributeCount; (void)defaultedCount; (void)attributes;
    xmlParserCtxtPtr parser = context;
    (*(long *)parser->_private)++;
}

static void onEndElement(void *context, const xmlChar *localName, const xmlChar *prefix, const xmlChar *uri) {
    (void)context; (void)localName; (void)prefix; (void)uri;
}

static void onCharacters(void *context, const xmlChar *text, int length) {
    (void)text; (void)length;
    xmlParserCtxtPtr parser = context;
    (*(long *)parser->_private)++;
}

#if LIBXML_VERSION >= 21200
static void onError(void *context, const xmlError *error) {
#else
static void onError(void *context, xmlErrorPtr error) {
#endif
    (void)context; (void)error;
}

long CXMLPeer_parseSAX2(const uint8_t *bytes, size_t count) {
    xmlInitParser(); /* idempotent and cheap after the first call */
    xmlParserCtxtPtr parser = xmlCreateMemoryParserCtxt((const char *)bytes, (int)count);
    if (parser == NULL) return -1;
    xmlCtxtUseOptions(parser, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    xmlSAXHandler handler;
    memset(&handler, 0, sizeof handler);
    handler.initialized = XML_SAX2_MAGIC;
    handler.startElementNs = onStartElement;
    handler.endElementNs = onEndElement;
    handler.characters = onCharacters;
    handler.cdataBlock = onCharacters;
    handler.ignorableWhitespace = onCharacters;
    handler.serror = onError;
    *parser->sax = handler;
    parser->userData = parser;
    long events = 0;
    parser->_private = &events;
    int status = xmlParseDocument(parser);
    int wellFormed = parser->wellFormed;
    xmlFreeParserCtxt(parser);
    return status == 0 && wellFormed ? events : -1;
}
