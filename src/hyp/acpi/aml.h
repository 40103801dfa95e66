/* A small AML (ACPI Machine Language) emitter: enough of ACPI 6.x chapter 20
 * ("ACPI Machine Language Specification") to write a DSDT by hand: names,
 * integers, strings, packages, scopes, devices and resource templates.
 *
 * Bytes go into a growing heap buffer.  Errors are sticky: once something
 * fails (out of memory, a bad name, a length AML cannot encode) a->err holds
 * a negative errno and every later call does nothing, so callers check once
 * at the end.  Constructs with a PkgLength are written as begin/end pairs:
 * *_begin() returns a mark, aml_end() (or aml_restemplate_end()) inserts the
 * PkgLength once the body's size is known, in its shortest encoding. */
#ifndef LODGE_ACPI_AML_H
#define LODGE_ACPI_AML_H

#include <stddef.h>
#include <stdint.h>

struct aml {
	uint8_t *buf;
	size_t len, cap;
	int err;            /* 0, or the first -errno */
};

/* Opcodes and prefixes (ACPI 6.x section 20.3, AML Byte Stream Byte Values). */
#define AML_ZERO_OP         0x00
#define AML_ONE_OP          0x01
#define AML_NAME_OP         0x08
#define AML_BYTE_PREFIX     0x0A
#define AML_WORD_PREFIX     0x0B
#define AML_DWORD_PREFIX    0x0C
#define AML_STRING_PREFIX   0x0D
#define AML_QWORD_PREFIX    0x0E
#define AML_SCOPE_OP        0x10
#define AML_BUFFER_OP       0x11
#define AML_PACKAGE_OP      0x12
#define AML_DUAL_NAME_PREFIX  0x2E
#define AML_MULTI_NAME_PREFIX 0x2F
#define AML_EXT_OP_PREFIX   0x5B
#define AML_METHOD_OP       0x14
#define AML_LOCAL0_OP       0x60
#define AML_ARG0_OP         0x68
#define AML_STORE_OP        0x70
#define AML_AND_OP          0x7B
#define AML_NOTIFY_OP       0x86
#define AML_IF_OP           0xA0
#define AML_RETURN_OP       0xA4
#define AML_EXT_OPREGION_OP 0x80   /* after AML_EXT_OP_PREFIX */
#define AML_EXT_FIELD_OP    0x81   /* after AML_EXT_OP_PREFIX */
#define AML_EXT_DEVICE_OP   0x82   /* after AML_EXT_OP_PREFIX */
#define AML_ROOT_CHAR       0x5C   /* '\' */
#define AML_ONES_OP         0xFF

void aml_init(struct aml *a);
void aml_free(struct aml *a);

void aml_byte(struct aml *a, uint8_t b);
void aml_bytes(struct aml *a, const void *p, size_t n);

/* NameString: optional leading '\', then 1..255 segments separated by '.',
 * each 1-4 characters of [A-Z0-9_] (not starting with a digit), padded
 * with '_' to four: "\\_SB.COM1", "_S5", "C00A". */
void aml_namestring(struct aml *a, const char *path);

/* ComputationalData: ZeroOp/OneOp/OnesOp or the shortest Byte/Word/DWord/
 * QWord constant. (Our DSDT is revision 2, so integers are 64-bit.) */
void aml_integer(struct aml *a, uint64_t v);
void aml_string(struct aml *a, const char *s);
/* EISAID("PNP0501") as the DWordConst ASL's EISAID() macro produces. */
uint32_t aml_eisaid_value(const char *id);   /* 0 if id is malformed */
void aml_eisaid(struct aml *a, const char *id);

/* Name(name, <object>): emits NameOp and the name; the caller emits the
 * object right after (an integer, string, package_begin, ...). */
void aml_name(struct aml *a, const char *name);

/* PkgLength (section 20.2.4): encode the length of a package whose body
 * (everything after the PkgLength) is body_len bytes.  Writes 1-4 bytes to
 * out and returns how many, or 0 if the length cannot be encoded. */
size_t aml_pkglength_encode(uint8_t out[4], size_t body_len);

/* Scope(path) { ... }, Device(name) { ... }, Package(n) { ... }. */
size_t aml_scope_begin(struct aml *a, const char *path);
size_t aml_device_begin(struct aml *a, const char *name);
size_t aml_package_begin(struct aml *a, uint8_t num_elements);
void aml_end(struct aml *a, size_t mark);

/* Method(name, nargs, NotSerialized) { ... }; If(predicate) { ... }:
 * the caller emits the predicate (a TermArg) right after aml_if_begin. */
size_t aml_method_begin(struct aml *a, const char *name, unsigned int nargs);
size_t aml_if_begin(struct aml *a);

/* OperationRegion(name, SystemIO, port, len). */
#define AML_REGION_SYSTEM_IO 0x01
void aml_opregion_io(struct aml *a, const char *name, uint16_t port, uint16_t len);
/* Field(region, DWordAcc, NoLock, WriteAsZeros) { names[0], 32, ... }:
 * n fields of 32 bits each, one after another from offset 0. */
void aml_field_dwords(struct aml *a, const char *region, const char *const *names, unsigned int n);

/* Terms: Store(src, dst) and And(x, y) (no target) take their operands
 * as the caller emits them next; LocalN and ArgN are one byte each. */
void aml_store(struct aml *a);
void aml_and(struct aml *a);
void aml_and_end(struct aml *a);     /* the And's Target: none */
void aml_local(struct aml *a, unsigned int n);
void aml_arg(struct aml *a, unsigned int n);
/* Notify(object, value). */
void aml_notify(struct aml *a, const char *object, uint64_t value);
/* A call of method path with no arguments. */
void aml_call0(struct aml *a, const char *path);
/* DefReturn := ReturnOp ArgObject: the term to return follows. */
void aml_return(struct aml *a);
/* DefBuffer of n bytes. */
void aml_buffer(struct aml *a, const void *bytes, size_t n);

/* ResourceTemplate() { ... } (section 6.4): a Buffer of resource
 * descriptors ending with an End Tag.  aml_restemplate_end() adds the End
 * Tag, the BufferSize and the PkgLength. */
size_t aml_restemplate_begin(struct aml *a);
void aml_restemplate_end(struct aml *a, size_t mark);
/* IO(Decode16, min, max, align, len): I/O Port Descriptor (6.4.2.5). */
void aml_res_io16(struct aml *a, uint16_t min, uint16_t max, uint8_t align, uint8_t len);
/* IRQNoFlags(){irq}: IRQ Descriptor, 2-byte form (6.4.2.1): edge, active high. */
void aml_res_irq_noflags(struct aml *a, unsigned int irq);

/* Address space descriptors (6.4.3.5), as a host bridge's _CRS lists
 * what it forwards: ResourceProducer, PosDecode, MinFixed, MaxFixed,
 * granularity and translation 0.
 * WordBusNumber(min, max), WordIO(EntireRange, min, max) and
 * DWordMemory(NonCacheable, ReadWrite, min, max). */
void aml_res_word_bus(struct aml *a, uint16_t min, uint16_t max);
void aml_res_word_io(struct aml *a, uint16_t min, uint16_t max);
void aml_res_dword_memory(struct aml *a, uint32_t min, uint32_t max);

#endif
