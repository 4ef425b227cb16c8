#include "CAnchorageMsgPackShim.h"

#include <msgpack.h>
#include <stdlib.h>

/* MARK: Writer */

struct anch_mp_writer {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    bool failed;
};

anch_mp_writer *anch_mp_writer_new(size_t capacity) {
    anch_mp_writer *writer = calloc(1, sizeof(anch_mp_writer));
    if (writer == NULL) return NULL;
    msgpack_sbuffer_init(&writer->buffer);
    if (capacity > 0) {
        writer->buffer.data = malloc(capacity);
        if (writer->buffer.data == NULL) {
            free(writer);
            return NULL;
        }
        writer->buffer.alloc = capacity;
    }
    msgpack_packer_init(&writer->packer, &writer->buffer, msgpack_sbuffer_write);
    return writer;
}

void anch_mp_writer_free(anch_mp_writer *writer) {
    if (writer == NULL) return;
    msgpack_sbuffer_destroy(&writer->buffer);
    free(writer);
}

bool anch_mp_writer_failed(const anch_mp_writer *writer) { return writer->failed; }

const uint8_t *anch_mp_writer_data(const anch_mp_writer *writer) { return (const uint8_t *)writer->buffer.data; }

size_t anch_mp_writer_size(const anch_mp_writer *writer) { return writer->buffer.size; }

#define ANCH_CHECK(call)                                                                                           \
    do {                                                                                                           \
        if ((call) != 0) writer->failed = true;                                                                    \
    } while (0)

void anch_mp_write_nil(anch_mp_writer *writer) { ANCH_CHECK(msgpack_pack_nil(&writer->packer)); }

void anch_mp_write_bool(anch_mp_writer *writer, bool value) {
    ANCH_CHECK(value ? msgpack_pack_true(&writer->packer) : msgpack_pack_false(&writer->packer));
}

void anch_mp_write_int64(anch_mp_writer *writer, int64_t value) { ANCH_CHECK(msgpack_pack_int64(&writer->packer, value)); }

void anch_mp_write_uint64(anch_mp_writer *writer, uint64_t value) {
    ANCH_CHECK(msgpack_pack_uint64(&writer->packer, value));
}

void anch_mp_write_double(anch_mp_writer *writer, double value) { ANCH_CHECK(msgpack_pack_double(&writer->packer, value)); }

void anch_mp_write_str(anch_mp_writer *writer, const uint8_t *bytes, size_t length) {
    ANCH_CHECK(msgpack_pack_str_with_body(&writer->packer, bytes, length));
}

void anch_mp_write_bin(anch_mp_writer *writer, const uint8_t *bytes, size_t length) {
    ANCH_CHECK(msgpack_pack_bin_with_body(&writer->packer, bytes, length));
}

void anch_mp_write_array(anch_mp_writer *writer, uint32_t count) { ANCH_CHECK(msgpack_pack_array(&writer->packer, count)); }

void anch_mp_write_map(anch_mp_writer *writer, uint32_t count) { ANCH_CHECK(msgpack_pack_map(&writer->packer, count)); }

/*
 * msgpack-c 4.0's msgpack_pack_timestamp chooses the same forms but returns
 * no value, so the status of a failed write would be lost; this writes the
 * same bytes through msgpack_pack_ext and msgpack_pack_ext_body.
 */
void anch_mp_write_timestamp(anch_mp_writer *writer, int64_t seconds, uint32_t nanoseconds) {
    uint8_t body[12];
    size_t size;
    if ((seconds >> 34) == 0) {
        const uint64_t packed = ((uint64_t)nanoseconds << 34) | (uint64_t)seconds;
        if ((packed >> 32) == 0) {
            size = 4;
            for (int i = 0; i < 4; i++) body[i] = (uint8_t)(packed >> (24 - 8 * i));
        } else {
            size = 8;
            for (int i = 0; i < 8; i++) body[i] = (uint8_t)(packed >> (56 - 8 * i));
        }
    } else {
        size = 12;
        for (int i = 0; i < 4; i++) body[i] = (uint8_t)(nanoseconds >> (24 - 8 * i));
        for (int i = 0; i < 8; i++) body[4 + i] = (uint8_t)((uint64_t)seconds >> (56 - 8 * i));
    }
    ANCH_CHECK(msgpack_pack_ext(&writer->packer, size, -1));
    ANCH_CHECK(msgpack_pack_ext_body(&writer->packer, body, size));
}

#undef ANCH_CHECK
