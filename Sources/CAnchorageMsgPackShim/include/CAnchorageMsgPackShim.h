#ifndef CANCHORAGE_MSGPACK_C_SHIM_H
#define CANCHORAGE_MSGPACK_C_SHIM_H

/*
 * A small C layer over msgpack-c for the SyncMessagePack codec.
 *
 * Writer: msgpack-c's packer (msgpack_packer over an msgpack_sbuffer); every
 * write chooses the smallest MessagePack form. A failed allocation sets a
 * sticky flag that the caller checks once, at the end. SyncMessagePack's
 * encoder no longer calls it: it writes the same bytes in Swift
 * (MessagePackWriter.swift), straight into its output, which saves a C call per
 * value and the copy out of the sbuffer.
 *
 * Reader: a pull reader that reads one value header at a time (a scalar
 * whole; a str or bin as the place of its bytes; an array or map as its
 * count), checking every length against the bytes that remain before anyone
 * allocates for it. It is header-only so that the compiler can inline it into
 * the Swift decoder. msgpack-c's own unpacker is not used for reading: it
 * allocates the element arrays a header declares before their elements exist
 * and nests at most 32 containers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: Writer */

/** A MessagePack writer: msgpack-c's packer over an owned, growable buffer. */
typedef struct anch_mp_writer anch_mp_writer;

/** A writer whose buffer starts with room for `capacity` bytes; NULL when out of memory. */
anch_mp_writer *anch_mp_writer_new(size_t capacity);
/** Frees the writer and its buffer. */
void anch_mp_writer_free(anch_mp_writer *writer);
/** Whether any write failed (out of memory); the output is then unusable. */
bool anch_mp_writer_failed(const anch_mp_writer *writer);
/** The bytes written so far. */
const uint8_t *anch_mp_writer_data(const anch_mp_writer *writer);
/** How many bytes were written. */
size_t anch_mp_writer_size(const anch_mp_writer *writer);

/** Writes nil. */
void anch_mp_write_nil(anch_mp_writer *writer);
/** Writes true or false. */
void anch_mp_write_bool(anch_mp_writer *writer, bool value);
/** Writes a signed integer in its smallest form (a fixint, or int/uint 8 to 64). */
void anch_mp_write_int64(anch_mp_writer *writer, int64_t value);
/** Writes an unsigned integer in its smallest form. */
void anch_mp_write_uint64(anch_mp_writer *writer, uint64_t value);
/** Writes a float64. */
void anch_mp_write_double(anch_mp_writer *writer, double value);
/** Writes a str header and its UTF-8 bytes (`length` < 2^32). */
void anch_mp_write_str(anch_mp_writer *writer, const uint8_t *bytes, size_t length);
/** Writes a bin header and its bytes (`length` < 2^32). */
void anch_mp_write_bin(anch_mp_writer *writer, const uint8_t *bytes, size_t length);
/** Writes an array header for `count` elements that follow. */
void anch_mp_write_array(anch_mp_writer *writer, uint32_t count);
/** Writes a map header for `count` key/value pairs that follow. */
void anch_mp_write_map(anch_mp_writer *writer, uint32_t count);
/**
 * Writes the timestamp extension (type -1) in its smallest form: 4 bytes for
 * whole seconds in 0 ..< 2^32, 8 bytes for seconds in 0 ..< 2^34, else 12.
 * `nanoseconds` < 10^9.
 */
void anch_mp_write_timestamp(anch_mp_writer *writer, int64_t seconds, uint32_t nanoseconds);

/* MARK: Reader */

/** What anch_mp_read found: a kind of value, or why there is none. */
typedef enum {
    ANCH_MP_NIL = 0,
    ANCH_MP_FALSE,
    ANCH_MP_TRUE,
    /** `integer` holds it (every int, and every uint up to INT64_MAX). */
    ANCH_MP_INTEGER,
    /** `unsigned_integer` holds a uint64 above INT64_MAX. */
    ANCH_MP_UNSIGNED_INTEGER,
    /** `real` holds a float64, or a float32 widened exactly. */
    ANCH_MP_REAL,
    /** `length` bytes of UTF-8 (not yet validated) start at `payload`. */
    ANCH_MP_STR,
    /** `length` bytes start at `payload`. */
    ANCH_MP_BIN,
    /** `length` elements follow. */
    ANCH_MP_ARRAY,
    /** `length` key/value pairs follow. */
    ANCH_MP_MAP,
    /** `integer` seconds since 1970 and `length` nanoseconds (< 10^9). */
    ANCH_MP_TIMESTAMP,

    /* Failures; `detail` as described, the position is the value's first byte. */
    /** The input ends inside the value. */
    ANCH_MP_ERROR_TRUNCATED,
    /** The byte 0xC1, which MessagePack never uses. */
    ANCH_MP_ERROR_RESERVED_BYTE,
    /** A str, bin or ext length (`detail`) runs past the end of the input. */
    ANCH_MP_ERROR_LENGTH_PAST_END,
    /** An array or map count (`detail`) exceeds the bytes that remain (every item takes one). */
    ANCH_MP_ERROR_COUNT_PAST_END,
    /** An extension type (`detail`) other than the timestamp, -1. */
    ANCH_MP_ERROR_UNSUPPORTED_EXTENSION,
    /** A timestamp whose size (`detail`) is not 4, 8 or 12 bytes. */
    ANCH_MP_ERROR_TIMESTAMP_SIZE,
    /** A timestamp whose nanoseconds (`detail`) are 10^9 or more. */
    ANCH_MP_ERROR_TIMESTAMP_NANOSECONDS,
} anch_mp_kind;

/** One value header read by anch_mp_read. */
typedef struct {
    anch_mp_kind kind;
    /** A str or bin length, an array or map count, a timestamp's nanoseconds. */
    uint32_t length;
    /** The offset of a str's or bin's bytes. */
    size_t payload;
    /** A signed integer, or a timestamp's seconds. */
    int64_t integer;
    /** An unsigned integer above INT64_MAX. */
    uint64_t unsigned_integer;
    /** A real. */
    double real;
    /** For a failure, the number it is about. */
    int64_t detail;
} anch_mp_token;

/**
 * Asks the processor to bring the `lines` cache lines from `address` on into its caches: a hint,
 * never a fault, whatever the address.
 */
static inline void anch_prefetch(uintptr_t address, int lines) {
    for (int line = 0; line < lines; line++) __builtin_prefetch((const void *)(address + 64 * (uintptr_t)line), 0, 3);
}

static inline uint16_t anch_mp_load16(const uint8_t *p) { return (uint16_t)(((unsigned)p[0] << 8) | p[1]); }

static inline uint32_t anch_mp_load32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t anch_mp_load64(const uint8_t *p) {
    return ((uint64_t)anch_mp_load32(p) << 32) | anch_mp_load32(p + 4);
}

/* Fails the read at `start`: the token says why, the position stays. */
static inline size_t anch_mp_fail(anch_mp_token *token, anch_mp_kind kind, int64_t detail, size_t start) {
    token->kind = kind;
    token->detail = detail;
    return start;
}

/*
 * Reads the extension whose type byte is at `type_at` and whose `size` bytes
 * follow it (already checked to be in bounds).
 */
static inline size_t anch_mp_read_extension(const uint8_t *bytes, size_t start, size_t type_at, uint32_t size,
                                            anch_mp_token *token) {
    const int8_t type = (int8_t)bytes[type_at];
    const uint8_t *data = bytes + type_at + 1;
    if (type != -1) return anch_mp_fail(token, ANCH_MP_ERROR_UNSUPPORTED_EXTENSION, type, start);
    switch (size) {
    case 4:
        token->integer = (int64_t)anch_mp_load32(data);
        token->length = 0;
        break;
    case 8: {
        const uint64_t packed = anch_mp_load64(data);
        token->integer = (int64_t)(packed & 0x3ffffffffull);
        token->length = (uint32_t)(packed >> 34);
        break;
    }
    case 12:
        token->length = anch_mp_load32(data);
        token->integer = (int64_t)anch_mp_load64(data + 4);
        break;
    default: return anch_mp_fail(token, ANCH_MP_ERROR_TIMESTAMP_SIZE, size, start);
    }
    if (token->length > 999999999u)
        return anch_mp_fail(token, ANCH_MP_ERROR_TIMESTAMP_NANOSECONDS, token->length, start);
    token->kind = ANCH_MP_TIMESTAMP;
    return type_at + 1 + size;
}

/*
 * Reads the value header at `position` (< `length`) into `token` and returns
 * the position after it: after a scalar, str, bin or timestamp whole, after
 * the header of an array or map (its items follow). On failure `token->kind`
 * is one of the ANCH_MP_ERROR_ kinds and `position` is returned unchanged.
 * Every length is checked against the bytes that remain before it is used.
 */
static inline size_t anch_mp_read(const uint8_t *bytes, size_t length, size_t position, anch_mp_token *token) {
    const size_t start = position;
    const uint8_t byte = bytes[position];
    const size_t available = length - position - 1; /* bytes after the type byte */

    if (byte <= 0x7f) {
        token->kind = ANCH_MP_INTEGER;
        token->integer = byte;
        return position + 1;
    }
    if (byte >= 0xe0) {
        token->kind = ANCH_MP_INTEGER;
        token->integer = (int8_t)byte;
        return position + 1;
    }
    if (byte <= 0x8f || (byte >= 0x90 && byte <= 0x9f)) {
        const uint32_t count = byte & 0x0f;
        const bool is_map = byte <= 0x8f;
        /* Every item takes at least one byte: a map needs two per pair. */
        if ((uint64_t)count * (is_map ? 2u : 1u) > available)
            return anch_mp_fail(token, ANCH_MP_ERROR_COUNT_PAST_END, count, start);
        token->kind = is_map ? ANCH_MP_MAP : ANCH_MP_ARRAY;
        token->length = count;
        return position + 1;
    }
    if (byte <= 0xbf) {
        const uint32_t size = byte & 0x1f;
        if (size > available) return anch_mp_fail(token, ANCH_MP_ERROR_LENGTH_PAST_END, size, start);
        token->kind = ANCH_MP_STR;
        token->length = size;
        token->payload = position + 1;
        return position + 1 + size;
    }

    /* 0xc0 ... 0xdf: the header size depends on the type byte. */
    static const uint8_t header_sizes[32] = {
        /* c0 nil */ 0, /* c1 */ 0, /* c2 c3 bool */ 0, 0,
        /* c4 c5 c6 bin */ 1, 2, 4,
        /* c7 c8 c9 ext */ 2, 3, 5,
        /* ca cb float */ 4, 8,
        /* cc cd ce cf uint */ 1, 2, 4, 8,
        /* d0 d1 d2 d3 int */ 1, 2, 4, 8,
        /* d4 ... d8 fixext */ 2, 3, 5, 9, 17,
        /* d9 da db str */ 1, 2, 4,
        /* dc dd array */ 2, 4,
        /* de df map */ 2, 4,
    };
    const size_t header = header_sizes[byte - 0xc0];
    if (header > available) return anch_mp_fail(token, ANCH_MP_ERROR_TRUNCATED, 0, start);
    const uint8_t *p = bytes + position + 1;
    const size_t after = position + 1 + header; /* the first byte after the header */
    const size_t remaining = available - header;
    uint32_t size;

    switch (byte) {
    case 0xc0: token->kind = ANCH_MP_NIL; return after;
    case 0xc1: return anch_mp_fail(token, ANCH_MP_ERROR_RESERVED_BYTE, byte, start);
    case 0xc2: token->kind = ANCH_MP_FALSE; return after;
    case 0xc3: token->kind = ANCH_MP_TRUE; return after;
    case 0xc4: case 0xc5: case 0xc6: case 0xd9: case 0xda: case 0xdb:
        size = header == 1 ? p[0] : header == 2 ? anch_mp_load16(p) : anch_mp_load32(p);
        if (size > remaining) return anch_mp_fail(token, ANCH_MP_ERROR_LENGTH_PAST_END, size, start);
        token->kind = byte <= 0xc6 ? ANCH_MP_BIN : ANCH_MP_STR;
        token->length = size;
        token->payload = after;
        return after + size;
    case 0xc7: case 0xc8: case 0xc9:
        size = byte == 0xc7 ? p[0] : byte == 0xc8 ? anch_mp_load16(p) : anch_mp_load32(p);
        if (size > remaining) return anch_mp_fail(token, ANCH_MP_ERROR_LENGTH_PAST_END, size, start);
        return anch_mp_read_extension(bytes, start, after - 1, size, token);
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return anch_mp_read_extension(bytes, start, position + 1, (uint32_t)(header - 1), token);
    case 0xca: {
        const uint32_t bits = anch_mp_load32(p);
        float value;
        memcpy(&value, &bits, sizeof value);
        token->kind = ANCH_MP_REAL;
        token->real = (double)value;
        return after;
    }
    case 0xcb: {
        const uint64_t bits = anch_mp_load64(p);
        memcpy(&token->real, &bits, sizeof token->real);
        token->kind = ANCH_MP_REAL;
        return after;
    }
    case 0xcc: token->kind = ANCH_MP_INTEGER; token->integer = p[0]; return after;
    case 0xcd: token->kind = ANCH_MP_INTEGER; token->integer = anch_mp_load16(p); return after;
    case 0xce: token->kind = ANCH_MP_INTEGER; token->integer = anch_mp_load32(p); return after;
    case 0xcf: {
        const uint64_t value = anch_mp_load64(p);
        if (value > (uint64_t)INT64_MAX) {
            token->kind = ANCH_MP_UNSIGNED_INTEGER;
            token->unsigned_integer = value;
        } else {
            token->kind = ANCH_MP_INTEGER;
            token->integer = (int64_t)value;
        }
        return after;
    }
    case 0xd0: token->kind = ANCH_MP_INTEGER; token->integer = (int8_t)p[0]; return after;
    case 0xd1: token->kind = ANCH_MP_INTEGER; token->integer = (int16_t)anch_mp_load16(p); return after;
    case 0xd2: token->kind = ANCH_MP_INTEGER; token->integer = (int32_t)anch_mp_load32(p); return after;
    case 0xd3: token->kind = ANCH_MP_INTEGER; token->integer = (int64_t)anch_mp_load64(p); return after;
    case 0xdc: case 0xdd: case 0xde: case 0xdf: {
        const uint32_t count = header == 2 ? anch_mp_load16(p) : anch_mp_load32(p);
        const bool is_map = byte >= 0xde;
        if ((uint64_t)count * (is_map ? 2u : 1u) > remaining)
            return anch_mp_fail(token, ANCH_MP_ERROR_COUNT_PAST_END, count, start);
        token->kind = is_map ? ANCH_MP_MAP : ANCH_MP_ARRAY;
        token->length = count;
        return after;
    }
    default: return anch_mp_fail(token, ANCH_MP_ERROR_RESERVED_BYTE, byte, start); /* unreachable */
    }
}

#ifdef __cplusplus
}
#endif

#endif
