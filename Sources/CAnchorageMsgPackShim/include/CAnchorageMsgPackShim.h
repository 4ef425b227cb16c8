#ifndef CANCHORAGE_MSGPACK_C_SHIM_H
#define CANCHORAGE_MSGPACK_C_SHIM_H

/*
 * A small C layer over msgpack-c for the SyncMessagePack codec.
 *
 * Writer: msgpack-c's packer over a growable buffer; every write chooses the
 * smallest MessagePack form. A failed allocation sets a sticky flag that the
 * caller checks once, at the end.
 *
 * Reader: msgpack-c's unpacker trusts length fields (it allocates the element
 * arrays a header declares) and nests at most MSGPACK_EMBED_STACK_SIZE
 * containers. So input is first checked by anch_mp_scan, which walks the
 * framing of every value without allocating per value, and only then handed
 * to msgpack_unpack_next.
 */

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

void anch_mp_write_nil(anch_mp_writer *writer);
void anch_mp_write_bool(anch_mp_writer *writer, bool value);
void anch_mp_write_int64(anch_mp_writer *writer, int64_t value);
void anch_mp_write_uint64(anch_mp_writer *writer, uint64_t value);
void anch_mp_write_double(anch_mp_writer *writer, double value);
/** A str header and its UTF-8 bytes (`length` < 2^32). */
void anch_mp_write_str(anch_mp_writer *writer, const uint8_t *bytes, size_t length);
/** A bin header and its bytes (`length` < 2^32). */
void anch_mp_write_bin(anch_mp_writer *writer, const uint8_t *bytes, size_t length);
/** An array header for `count` elements that follow. */
void anch_mp_write_array(anch_mp_writer *writer, uint32_t count);
/** A map header for `count` key/value pairs that follow. */
void anch_mp_write_map(anch_mp_writer *writer, uint32_t count);
/** The timestamp extension (type -1) in its 4-, 8- or 12-byte form; `nanoseconds` < 10^9. */
void anch_mp_write_timestamp(anch_mp_writer *writer, int64_t seconds, uint32_t nanoseconds);

/* MARK: Scanner */

/** What anch_mp_scan found. */
typedef enum {
    ANCH_MP_SCAN_OK = 0,
    /** The input ends inside a value. */
    ANCH_MP_SCAN_TRUNCATED,
    /** The byte 0xC1, which MessagePack never uses. */
    ANCH_MP_SCAN_RESERVED_BYTE,
    /** A str, bin or ext length runs past the end; `detail` is the length. */
    ANCH_MP_SCAN_LENGTH_PAST_END,
    /** An array or map declares more elements than bytes remain; `detail` is the count. */
    ANCH_MP_SCAN_COUNT_PAST_END,
    /** A map key that is not a str. */
    ANCH_MP_SCAN_KEY_NOT_STRING,
    /** An extension type other than -1; `detail` is the type. */
    ANCH_MP_SCAN_UNSUPPORTED_EXTENSION,
    /** A timestamp of the wrong size (`detail`) or with nanoseconds of 10^9 or more. */
    ANCH_MP_SCAN_BAD_TIMESTAMP,
    /** A float32 or float64 that is NaN or infinite. */
    ANCH_MP_SCAN_NON_FINITE_REAL,
    /** Bytes after the first complete value. */
    ANCH_MP_SCAN_TRAILING_DATA,
    /** Containers nested deeper than the limit. */
    ANCH_MP_SCAN_TOO_DEEP,
    /** More values than the limit. */
    ANCH_MP_SCAN_TOO_MANY_VALUES,
    /** The scanner could not allocate its stack. */
    ANCH_MP_SCAN_OUT_OF_MEMORY,
} anch_mp_scan_status;

/** The result of anch_mp_scan; release it with anch_mp_scan_result_destroy. */
typedef struct {
    anch_mp_scan_status status;
    /** The offset of the problem, or of the end of the value when OK. */
    size_t offset;
    /** A status-specific number (a length, a count, an extension type). */
    int64_t detail;
    /**
     * Offsets, ascending, of the non-empty containers holding more nested
     * non-empty containers than msgpack-c's unpacker can open at once
     * (anch_mp_unpack_nesting_limit()). Those are read header by header.
     */
    size_t *tall_offsets;
    size_t tall_count;
} anch_mp_scan_result;

/**
 * Checks that `bytes` holds exactly one well-framed MessagePack value that
 * this project's value model accepts: every length and count fits in the
 * bytes that remain, nesting is at most `max_depth`, at most `max_values`
 * values (map keys not counted), map keys are str, the only extension is a
 * well-formed timestamp, reals are finite, no byte follows the value.
 */
void anch_mp_scan(const uint8_t *bytes, size_t length, size_t max_depth, size_t max_values,
                  anch_mp_scan_result *result);
/** Frees what anch_mp_scan allocated in `result`. */
void anch_mp_scan_result_destroy(anch_mp_scan_result *result);

/** How many non-empty containers msgpack-c's unpacker can have open at once. */
size_t anch_mp_unpack_nesting_limit(void);

/* MARK: Unpacking */

/**
 * Unpacks one value at `*offset` with msgpack_unpack_next, replacing what
 * `result` held; advances `*offset` past it. Returns msgpack-c's status.
 */
msgpack_unpack_return anch_mp_unpack(msgpack_unpacked *result, const uint8_t *bytes, size_t length,
                                     size_t *offset);

/** A new, empty unpack result, or NULL when out of memory. Free with anch_mp_unpacked_free. */
msgpack_unpacked *anch_mp_unpacked_new(void);
/** Frees an unpack result and the objects it holds. */
void anch_mp_unpacked_free(msgpack_unpacked *result);

/** The timestamp an ext object carries; false when it is not a timestamp. */
bool anch_mp_timestamp(const msgpack_object *object, int64_t *seconds, uint32_t *nanoseconds);

#ifdef __cplusplus
}
#endif

#endif
