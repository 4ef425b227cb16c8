#include "CMsgPackPeer.h"

#include <msgpack.h>
#include <stdlib.h>

struct CMsgPackPeerDocument {
    msgpack_zone zone;
    msgpack_object object;
};

size_t CMsgPackPeer_decode(const uint8_t *bytes, size_t count) {
    msgpack_zone zone;
    if (!msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE)) return 0;
    msgpack_object object;
    size_t offset = 0;
    msgpack_unpack_return status = msgpack_unpack((const char *)bytes, count, &offset, &zone, &object);
    msgpack_zone_destroy(&zone);
    return status == MSGPACK_UNPACK_SUCCESS ? offset : 0;
}

CMsgPackPeerDocument *CMsgPackPeer_documentCreate(const uint8_t *bytes, size_t count) {
    CMsgPackPeerDocument *document = malloc(sizeof *document);
    if (document == NULL) return NULL;
    if (!msgpack_zone_init(&document->zone, MSGPACK_ZONE_CHUNK_SIZE)) {
        free(document);
        return NULL;
    }
    size_t offset = 0;
    msgpack_unpack_return status =
        msgpack_unpack((const char *)bytes, count, &offset, &document->zone, &document->object);
    if (status != MSGPACK_UNPACK_SUCCESS) {
        CMsgPackPeer_documentDestroy(document);
        return NULL;
    }
    return document;
}

size_t CMsgPackPeer_encode(const CMsgPackPeerDocument *document) {
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer packer;
    msgpack_packer_init(&packer, &buffer, msgpack_sbuffer_write);
    int status = msgpack_pack_object(&packer, document->object);
    size_t size = status == 0 ? buffer.size : 0;
    msgpack_sbuffer_destroy(&buffer);
    return size;
}

void CMsgPackPeer_documentDestroy(CMsgPackPeerDocument *document) {
    if (document == NULL) return;
    msgpack_zone_destroy(&document->zone);
    free(document);
}
