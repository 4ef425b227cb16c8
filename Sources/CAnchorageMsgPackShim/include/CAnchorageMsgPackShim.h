#ifndef CANCHORAGE_MSGPACK_C_SHIM_H
#define CANCHORAGE_MSGPACK_C_SHIM_H
/* The shim's API is written by the MessagePack codec's author. */
#endif
