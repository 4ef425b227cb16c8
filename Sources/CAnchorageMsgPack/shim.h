#ifndef CANCHORAGE_MSGPACK_SHIM_H
#define CANCHORAGE_MSGPACK_SHIM_H
#include <msgpack.h>
#endif
