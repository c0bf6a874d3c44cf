/* integer_width.h — the integer types of enum aspects_type by width and sign: the one place
 * that knows them. Reading an argument or result as a 64-bit value (sign-extended for signed
 * types, so conditions compare values as the rule wrote them), storing one back at its own
 * width, and fitting a 64-bit value to a type all go through these. Static inline: they sit
 * on the dispatcher's paths. A float's bits are an
 * unsigned value of its width; a pointer, string or double is a full word. */
#ifndef ASP_INTEGER_WIDTH_H
#define ASP_INTEGER_WIDTH_H

#include "base.h"

/* The type's width in bytes: 1, 2, 4 or 8. */
static inline uint32_t asp_int_bytes(uint8_t type) {
    switch (type) {
    case ASPECTS_T_I8: case ASPECTS_T_U8: return 1;
    case ASPECTS_T_I16: case ASPECTS_T_U16: return 2;
    case ASPECTS_T_I32: case ASPECTS_T_U32: case ASPECTS_T_F32: return 4;
    default: return 8;
    }
}

static inline int asp_int_signed(uint8_t type) {
    return type == ASPECTS_T_I8 || type == ASPECTS_T_I16 || type == ASPECTS_T_I32 || type == ASPECTS_T_I64;
}

/* v's low bytes as the type holds them, extended to 64 bits. (Each function below is one
 * switch over the types, which the compiler makes a jump to a single load or extension: the
 * firing path reads a result through it.) */
static inline uint64_t asp_int_fit(uint8_t type, uint64_t v) {
    switch (type) {
    case ASPECTS_T_I8: return (uint64_t)(int64_t)(int8_t)v;
    case ASPECTS_T_U8: return (uint8_t)v;
    case ASPECTS_T_I16: return (uint64_t)(int64_t)(int16_t)v;
    case ASPECTS_T_U16: return (uint16_t)v;
    case ASPECTS_T_I32: return (uint64_t)(int64_t)(int32_t)v;
    case ASPECTS_T_U32: case ASPECTS_T_F32: return (uint32_t)v;
    default: return v;
    }
}

/* The value of that type at p (which holds at least its width), extended to 64 bits. */
static inline uint64_t asp_int_load(uint8_t type, const void *p) {
    switch (type) {
    case ASPECTS_T_I8: return (uint64_t)(int64_t)*(const int8_t *)p;
    case ASPECTS_T_U8: return *(const uint8_t *)p;
    case ASPECTS_T_I16: return (uint64_t)(int64_t)*(const int16_t *)p;
    case ASPECTS_T_U16: return *(const uint16_t *)p;
    case ASPECTS_T_I32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case ASPECTS_T_U32: case ASPECTS_T_F32: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

/* v stored at p at the type's own width. */
static inline void asp_int_store(uint8_t type, void *p, uint64_t v) {
    switch (asp_int_bytes(type)) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(uint16_t *)p = (uint16_t)v; break;
    case 4: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
    }
}

#endif
