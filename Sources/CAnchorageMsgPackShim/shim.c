#include "CAnchorageMsgPackShim.h"

#include <stdlib.h>
#include <string.h>
#include <msgpack/unpack_define.h>

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

void anch_mp_write_timestamp(anch_mp_writer *writer, int64_t seconds, uint32_t nanoseconds) {
    msgpack_timestamp timestamp = {.tv_sec = seconds, .tv_nsec = nanoseconds};
    ANCH_CHECK(msgpack_pack_timestamp(&writer->packer, &timestamp));
}

#undef ANCH_CHECK

/* MARK: Scanner */

/* One open non-empty container. */
typedef struct {
    size_t offset;     /* of its header */
    uint64_t remaining; /* items still to read; a map counts keys and values */
    size_t height;     /* 1 + the tallest non-empty child container seen so far */
    bool is_map;
} anch_mp_frame;

static inline uint16_t load16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

static inline uint32_t load32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t load64(const uint8_t *p) { return ((uint64_t)load32(p) << 32) | load32(p + 4); }

static inline bool is_str_header(uint8_t byte) { return (byte >= 0xa0 && byte <= 0xbf) || (byte >= 0xd9 && byte <= 0xdb); }

/* Records a tall container's offset; false when out of memory. */
static bool push_tall(anch_mp_scan_result *result, size_t *capacity, size_t offset) {
    if (result->tall_count == *capacity) {
        size_t next = *capacity ? *capacity * 2 : 16;
        size_t *grown = realloc(result->tall_offsets, next * sizeof(size_t));
        if (grown == NULL) return false;
        result->tall_offsets = grown;
        *capacity = next;
    }
    result->tall_offsets[result->tall_count++] = offset;
    return true;
}

static int compare_offsets(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t anch_mp_unpack_nesting_limit(void) { return MSGPACK_EMBED_STACK_SIZE; }

#define FAIL(code, at, value)                                                                                      \
    do {                                                                                                           \
        result->status = (code);                                                                                   \
        result->offset = (at);                                                                                     \
        result->detail = (int64_t)(value);                                                                         \
        goto done;                                                                                                 \
    } while (0)

void anch_mp_scan(const uint8_t *bytes, size_t length, size_t max_depth, size_t max_values,
                  anch_mp_scan_result *result) {
    anch_mp_frame inline_stack[32];
    anch_mp_frame *stack = inline_stack;
    size_t stack_capacity = 32, top = 0, tall_capacity = 0, values = 0, pos = 0;
    const size_t tall_limit = MSGPACK_EMBED_STACK_SIZE;

    result->status = ANCH_MP_SCAN_OK;
    result->offset = 0;
    result->detail = 0;
    result->tall_offsets = NULL;
    result->tall_count = 0;

    for (;;) {
        if (pos >= length) FAIL(ANCH_MP_SCAN_TRUNCATED, length, 0);
        const size_t start = pos;
        const uint8_t byte = bytes[pos];
        const size_t available = length - pos; /* >= 1 */
        const bool is_key = top > 0 && stack[top - 1].is_map && (stack[top - 1].remaining % 2 == 0);

        if (is_key) {
            if (!is_str_header(byte)) FAIL(ANCH_MP_SCAN_KEY_NOT_STRING, start, byte);
        } else if (++values > max_values) {
            FAIL(ANCH_MP_SCAN_TOO_MANY_VALUES, start, values);
        }

        size_t header = 1;     /* bytes before the payload or the first element */
        uint64_t payload = 0;  /* bytes of str, bin or ext data */
        uint64_t children = 0; /* items of a container (a map: 2 per pair) */
        bool container = false, is_map = false, is_ext = false;

        if (byte <= 0x7f || byte >= 0xe0) {
            /* positive or negative fixint */
        } else if (byte <= 0x8f) {
            container = is_map = true;
            children = 2u * (uint64_t)(byte & 0x0f);
        } else if (byte <= 0x9f) {
            container = true;
            children = byte & 0x0f;
        } else if (byte <= 0xbf) {
            payload = byte & 0x1f;
        } else {
            switch (byte) {
            case 0xc0: case 0xc2: case 0xc3: break;
            case 0xc1: FAIL(ANCH_MP_SCAN_RESERVED_BYTE, start, byte);
            case 0xc4: case 0xd9: header = 2; break;
            case 0xc5: case 0xda: header = 3; break;
            case 0xc6: case 0xdb: header = 5; break;
            case 0xc7: header = 3; is_ext = true; break;
            case 0xc8: header = 4; is_ext = true; break;
            case 0xc9: header = 6; is_ext = true; break;
            case 0xca: header = 5; break;
            case 0xcb: header = 9; break;
            case 0xcc: case 0xd0: header = 2; break;
            case 0xcd: case 0xd1: header = 3; break;
            case 0xce: case 0xd2: header = 5; break;
            case 0xcf: case 0xd3: header = 9; break;
            case 0xd4: header = 2; payload = 1; is_ext = true; break;
            case 0xd5: header = 2; payload = 2; is_ext = true; break;
            case 0xd6: header = 2; payload = 4; is_ext = true; break;
            case 0xd7: header = 2; payload = 8; is_ext = true; break;
            case 0xd8: header = 2; payload = 16; is_ext = true; break;
            case 0xdc: header = 3; container = true; break;
            case 0xdd: header = 5; container = true; break;
            case 0xde: header = 3; container = is_map = true; break;
            case 0xdf: header = 5; container = is_map = true; break;
            default: break;
            }
            if (header > available) FAIL(ANCH_MP_SCAN_TRUNCATED, length, 0);
            const uint8_t *p = bytes + pos + 1;
            switch (byte) {
            case 0xc4: case 0xd9: payload = p[0]; break;
            case 0xc5: case 0xda: payload = load16(p); break;
            case 0xc6: case 0xdb: payload = load32(p); break;
            case 0xc7: payload = p[0]; break;
            case 0xc8: payload = load16(p); break;
            case 0xc9: payload = load32(p); break;
            case 0xca: {
                uint32_t bits = load32(p);
                if ((bits & 0x7f800000u) == 0x7f800000u) FAIL(ANCH_MP_SCAN_NON_FINITE_REAL, start, 0);
                break;
            }
            case 0xcb: {
                uint64_t bits = load64(p);
                if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
                    FAIL(ANCH_MP_SCAN_NON_FINITE_REAL, start, 0);
                break;
            }
            case 0xdc: children = load16(p); break;
            case 0xdd: children = load32(p); break;
            case 0xde: children = 2u * (uint64_t)load16(p); break;
            case 0xdf: children = 2u * (uint64_t)load32(p); break;
            default: break;
            }
        }

        /* Every item of a container takes at least one byte, and a payload takes its length. */
        const uint64_t after_header = available - header;
        if (payload > after_header) FAIL(ANCH_MP_SCAN_LENGTH_PAST_END, start, payload);
        if (children > after_header) FAIL(ANCH_MP_SCAN_COUNT_PAST_END, start, is_map ? children / 2 : children);

        if (is_ext) {
            const int8_t type = (int8_t)bytes[pos + header - 1];
            if (type != -1) FAIL(ANCH_MP_SCAN_UNSUPPORTED_EXTENSION, start, type);
            const uint8_t *data = bytes + pos + header;
            if (payload == 8) {
                if ((load64(data) >> 34) > 999999999u) FAIL(ANCH_MP_SCAN_BAD_TIMESTAMP, start, payload);
            } else if (payload == 12) {
                if (load32(data) > 999999999u) FAIL(ANCH_MP_SCAN_BAD_TIMESTAMP, start, payload);
            } else if (payload != 4) {
                FAIL(ANCH_MP_SCAN_BAD_TIMESTAMP, start, payload);
            }
        }

        pos += header + (size_t)payload;
        size_t height = 0; /* of the item just read, counting non-empty containers only */

        if (container) {
            if (top + 1 > max_depth) FAIL(ANCH_MP_SCAN_TOO_DEEP, start, top + 1);
            if (children > 0) {
                if (top == stack_capacity) {
                    size_t next = stack_capacity * 2;
                    anch_mp_frame *grown;
                    if (stack == inline_stack) {
                        grown = malloc(next * sizeof(anch_mp_frame));
                        if (grown != NULL) memcpy(grown, inline_stack, sizeof(inline_stack));
                    } else {
                        grown = realloc(stack, next * sizeof(anch_mp_frame));
                    }
                    if (grown == NULL) FAIL(ANCH_MP_SCAN_OUT_OF_MEMORY, start, 0);
                    stack = grown;
                    stack_capacity = next;
                }
                stack[top++] = (anch_mp_frame){.offset = start, .remaining = children, .height = 1, .is_map = is_map};
                continue;
            }
        }

        /* The item is complete: close every container it completes. */
        for (;;) {
            if (top == 0) {
                if (pos != length) FAIL(ANCH_MP_SCAN_TRAILING_DATA, pos, length - pos);
                result->offset = pos;
                if (result->tall_count > 1)
                    qsort(result->tall_offsets, result->tall_count, sizeof(size_t), compare_offsets);
                goto done;
            }
            anch_mp_frame *frame = &stack[top - 1];
            if (height + 1 > frame->height) frame->height = height + 1;
            if (--frame->remaining > 0) break;
            height = frame->height;
            if (height > tall_limit && !push_tall(result, &tall_capacity, frame->offset))
                FAIL(ANCH_MP_SCAN_OUT_OF_MEMORY, frame->offset, 0);
            top--;
        }
    }

done:
    if (stack != inline_stack) free(stack);
    if (result->status != ANCH_MP_SCAN_OK) anch_mp_scan_result_destroy(result);
}

#undef FAIL

void anch_mp_scan_result_destroy(anch_mp_scan_result *result) {
    free(result->tall_offsets);
    result->tall_offsets = NULL;
    result->tall_count = 0;
}

/* MARK: Unpacking */

msgpack_unpack_return anch_mp_unpack(msgpack_unpacked *result, const uint8_t *bytes, size_t length,
                                     size_t *offset) {
    return msgpack_unpack_next(result, (const char *)bytes, length, offset);
}

msgpack_unpacked *anch_mp_unpacked_new(void) {
    msgpack_unpacked *result = malloc(sizeof(msgpack_unpacked));
    if (result != NULL) msgpack_unpacked_init(result);
    return result;
}

void anch_mp_unpacked_free(msgpack_unpacked *result) {
    if (result == NULL) return;
    msgpack_unpacked_destroy(result);
    free(result);
}

bool anch_mp_timestamp(const msgpack_object *object, int64_t *seconds, uint32_t *nanoseconds) {
    msgpack_timestamp timestamp;
    if (!msgpack_object_to_timestamp(object, &timestamp)) return false;
    *seconds = timestamp.tv_sec;
    *nanoseconds = timestamp.tv_nsec;
    return true;
}
