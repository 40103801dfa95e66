/* The AML emitter: see aml.h. Section numbers are ACPI 6.x. */
#include "aml.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void aml_init(struct aml *a)
{
	*a = (struct aml){ 0 };
}

void aml_free(struct aml *a)
{
	free(a->buf);
	*a = (struct aml){ 0 };
}

static void aml_fail(struct aml *a, int err)
{
	if (!a->err)
		a->err = err;
}

static bool aml_reserve(struct aml *a, size_t extra)
{
	size_t cap;
	uint8_t *p;

	if (a->err)
		return false;
	if (extra <= a->cap - a->len)
		return true;
	cap = a->cap ? a->cap : 256;
	while (cap - a->len < extra)
		cap *= 2;
	p = realloc(a->buf, cap);
	if (!p) {
		aml_fail(a, -ENOMEM);
		return false;
	}
	a->buf = p;
	a->cap = cap;
	return true;
}

void aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (!aml_reserve(a, n))
		return;
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

/* Insert n bytes at offset at, moving what follows. */
static void aml_insert(struct aml *a, size_t at, const uint8_t *p, size_t n)
{
	if (at > a->len)
		aml_fail(a, -EINVAL);
	if (!aml_reserve(a, n))
		return;
	memmove(a->buf + at + n, a->buf + at, a->len - at);
	memcpy(a->buf + at, p, n);
	a->len += n;
}

static void aml_le(struct aml *a, uint64_t v, unsigned int bytes)
{
	uint8_t b[8];

	for (unsigned int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	aml_bytes(a, b, bytes);
}

/* NameSeg (20.2.2): LeadNameChar ('A'-'Z' or '_') then three NameChars
 * ('A'-'Z', '0'-'9', '_'); shorter names are padded with '_'. */
static bool nameseg_encode(uint8_t seg[4], const char *s, size_t n)
{
	if (n < 1 || n > 4)
		return false;
	for (size_t i = 0; i < 4; i++) {
		char c = i < n ? s[i] : '_';
		bool lead_ok = (c >= 'A' && c <= 'Z') || c == '_';

		if (!lead_ok && !(i > 0 && c >= '0' && c <= '9'))
			return false;
		seg[i] = (uint8_t)c;
	}
	return true;
}

void aml_namestring(struct aml *a, const char *path)
{
	uint8_t segs[255][4];
	size_t nsegs = 0;
	bool root = false;
	const char *p = path;

	if (*p == '\\') {
		root = true;
		p++;
	}
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (nsegs == 255 || !nameseg_encode(segs[nsegs], p, n)) {
			aml_fail(a, -EINVAL);
			return;
		}
		nsegs++;
		p += n + (dot ? 1 : 0);
		if (dot && !*p) {            /* trailing '.' */
			aml_fail(a, -EINVAL);
			return;
		}
	}
	if (root)
		aml_byte(a, AML_ROOT_CHAR);
	if (nsegs == 0) {
		aml_byte(a, 0x00);           /* NullName: only "\" itself */
		return;
	}
	if (nsegs == 2) {
		aml_byte(a, AML_DUAL_NAME_PREFIX);
	} else if (nsegs > 2) {
		aml_byte(a, AML_MULTI_NAME_PREFIX);
		aml_byte(a, (uint8_t)nsegs);
	}
	aml_bytes(a, segs, nsegs * 4);
}

void aml_integer(struct aml *a, uint64_t v)
{
	if (v == 0) {
		aml_byte(a, AML_ZERO_OP);
	} else if (v == 1) {
		aml_byte(a, AML_ONE_OP);
	} else if (v == UINT64_MAX) {
		aml_byte(a, AML_ONES_OP);
	} else if (v <= 0xFF) {
		aml_byte(a, AML_BYTE_PREFIX);
		aml_le(a, v, 1);
	} else if (v <= 0xFFFF) {
		aml_byte(a, AML_WORD_PREFIX);
		aml_le(a, v, 2);
	} else if (v <= 0xFFFFFFFF) {
		aml_byte(a, AML_DWORD_PREFIX);
		aml_le(a, v, 4);
	} else {
		aml_byte(a, AML_QWORD_PREFIX);
		aml_le(a, v, 8);
	}
}

void aml_string(struct aml *a, const char *s)
{
	for (const char *c = s; *c; c++) {
		if ((unsigned char)*c > 0x7F) {   /* AsciiCharList: 0x01-0x7F */
			aml_fail(a, -EINVAL);
			return;
		}
	}
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, s, strlen(s) + 1);
}

/* EISA ID: three upper-case letters packed 5 bits each ('A' = 1) into a
 * big-endian 16-bit word, then four hex digits as a big-endian 16-bit
 * product id; the four bytes form a little-endian DWORD. */
uint32_t aml_eisaid_value(const char *id)
{
	uint8_t b[4];
	uint16_t vendor = 0, product = 0;

	if (strlen(id) != 7)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z')
			return 0;
		vendor = (uint16_t)(vendor << 5 | (id[i] - 'A' + 1));
	}
	for (int i = 3; i < 7; i++) {
		char c = id[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return 0;
		product = (uint16_t)(product << 4 | d);
	}
	b[0] = (uint8_t)(vendor >> 8);
	b[1] = (uint8_t)vendor;
	b[2] = (uint8_t)(product >> 8);
	b[3] = (uint8_t)product;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

void aml_eisaid(struct aml *a, const char *id)
{
	uint32_t v = aml_eisaid_value(id);

	if (!v) {
		aml_fail(a, -EINVAL);
		return;
	}
	/* Always a DWordConst, as iasl emits it, whatever the value. */
	aml_byte(a, AML_DWORD_PREFIX);
	aml_le(a, v, 4);
}

void aml_name(struct aml *a, const char *name)
{
	aml_byte(a, AML_NAME_OP);
	aml_namestring(a, name);
}

/* PkgLength counts itself: one byte holds 0-63 in bits 0-5; otherwise
 * bits 7-6 of the lead byte give the number (1-3) of following bytes, bits
 * 3-0 are the low nibble and each following byte the next 8 bits. */
size_t aml_pkglength_encode(uint8_t out[4], size_t body_len)
{
	size_t total;
	size_t n;

	if (body_len + 1 <= 0x3F) {
		out[0] = (uint8_t)(body_len + 1);
		return 1;
	}
	for (n = 2; n <= 4; n++) {
		total = body_len + n;
		if (total < (size_t)1 << (4 + 8 * (n - 1)))
			break;
	}
	if (n > 4)
		return 0;
	out[0] = (uint8_t)((n - 1) << 6 | (total & 0x0F));
	for (size_t i = 1; i < n; i++)
		out[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	return n;
}

void aml_end(struct aml *a, size_t mark)
{
	uint8_t pkglen[4];
	size_t n;

	if (a->err)
		return;
	if (mark > a->len) {
		aml_fail(a, -EINVAL);
		return;
	}
	n = aml_pkglength_encode(pkglen, a->len - mark);
	if (!n) {
		aml_fail(a, -E2BIG);
		return;
	}
	aml_insert(a, mark, pkglen, n);
}

/* DefScope := ScopeOp PkgLength NameString TermList (19.6.122). */
size_t aml_scope_begin(struct aml *a, const char *path)
{
	size_t mark;

	aml_byte(a, AML_SCOPE_OP);
	mark = a->len;
	aml_namestring(a, path);
	return mark;
}

/* DefDevice := DeviceOp PkgLength NameString TermList; DeviceOp = 0x5B 0x82. */
size_t aml_device_begin(struct aml *a, const char *name)
{
	size_t mark;

	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_EXT_DEVICE_OP);
	mark = a->len;
	aml_namestring(a, name);
	return mark;
}

/* DefPackage := PackageOp PkgLength NumElements PackageElementList. */
size_t aml_package_begin(struct aml *a, uint8_t num_elements)
{
	size_t mark;

	aml_byte(a, AML_PACKAGE_OP);
	mark = a->len;
	aml_byte(a, num_elements);
	return mark;
}

/* DefBuffer := BufferOp PkgLength BufferSize ByteList: the size comes
 * before the bytes, so both it and the PkgLength are inserted at the end. */
size_t aml_restemplate_begin(struct aml *a)
{
	aml_byte(a, AML_BUFFER_OP);
	return a->len;
}

static void aml_buffer_end(struct aml *a, size_t mark)
{
	struct aml size = { 0 };

	if (a->err)
		return;
	if (mark > a->len) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_integer(&size, a->len - mark);
	if (size.err) {
		aml_fail(a, size.err);
	} else {
		aml_insert(a, mark, size.buf, size.len);
		aml_end(a, mark);
	}
	aml_free(&size);
}

void aml_restemplate_end(struct aml *a, size_t mark)
{
	/* End Tag (6.4.2.9): 0x79, checksum 0 ("treat as correct"). */
	aml_byte(a, 0x79);
	aml_byte(a, 0x00);
	aml_buffer_end(a, mark);
}

void aml_buffer(struct aml *a, const void *bytes, size_t n)
{
	size_t mark;

	aml_byte(a, AML_BUFFER_OP);
	mark = a->len;
	aml_bytes(a, bytes, n);
	aml_buffer_end(a, mark);
}

void aml_return(struct aml *a) { aml_byte(a, AML_RETURN_OP); }

void aml_res_io16(struct aml *a, uint16_t min, uint16_t max, uint8_t align, uint8_t len)
{
	/* Small item, type 0x08, length 7; information bit 0: 16-bit decode. */
	uint8_t d[8] = { 0x47, 0x01, (uint8_t)min, (uint8_t)(min >> 8),
			 (uint8_t)max, (uint8_t)(max >> 8), align, len };

	aml_bytes(a, d, sizeof(d));
}

void aml_res_irq_noflags(struct aml *a, unsigned int irq)
{
	/* Small item, type 0x04, length 2: a 16-bit IRQ mask. */
	uint16_t mask;

	if (irq > 15) {
		aml_fail(a, -EINVAL);
		return;
	}
	mask = (uint16_t)(1u << irq);
	aml_byte(a, 0x22);
	aml_le(a, mask, 2);
}

/* DefMethod := MethodOp PkgLength NameString MethodFlags TermList;
 * MethodFlags bits 0-2: ArgCount, bit 3: SerializeFlag (clear). */
size_t aml_method_begin(struct aml *a, const char *name, unsigned int nargs)
{
	size_t mark;

	if (nargs > 7)
		aml_fail(a, -EINVAL);
	aml_byte(a, AML_METHOD_OP);
	mark = a->len;
	aml_namestring(a, name);
	aml_byte(a, (uint8_t)(nargs & 7));
	return mark;
}

/* DefIfElse := IfOp PkgLength Predicate TermList. */
size_t aml_if_begin(struct aml *a)
{
	aml_byte(a, AML_IF_OP);
	return a->len;
}

/* DefOpRegion := OpRegionOp NameString RegionSpace RegionOffset RegionLen. */
void aml_opregion_io(struct aml *a, const char *name, uint16_t port, uint16_t len)
{
	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_EXT_OPREGION_OP);
	aml_namestring(a, name);
	aml_byte(a, AML_REGION_SYSTEM_IO);
	aml_integer(a, port);
	aml_integer(a, len);
}

/* DefField := FieldOp PkgLength NameString FieldFlags FieldList; a
 * NamedField is a NameSeg and its width in bits as a PkgLength. */
void aml_field_dwords(struct aml *a, const char *region, const char *const *names, unsigned int n)
{
	/* AccessType DWordAcc (3), LockRule NoLock (0), UpdateRule WriteAsZeros (2 << 5). */
	const uint8_t flags = 0x03 | 2u << 5;
	size_t mark;

	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_EXT_FIELD_OP);
	mark = a->len;
	aml_namestring(a, region);
	aml_byte(a, flags);
	for (unsigned int i = 0; i < n; i++) {
		uint8_t seg[4];

		if (!nameseg_encode(seg, names[i], strlen(names[i]))) {
			aml_fail(a, -EINVAL);
			return;
		}
		aml_bytes(a, seg, 4);
		aml_byte(a, 32);         /* a one-byte PkgLength: 32 bits */
	}
	aml_end(a, mark);
}

void aml_store(struct aml *a) { aml_byte(a, AML_STORE_OP); }
void aml_and(struct aml *a) { aml_byte(a, AML_AND_OP); }
void aml_and_end(struct aml *a) { aml_byte(a, 0x00); }   /* Target: NullName */

void aml_local(struct aml *a, unsigned int n)
{
	if (n > 7)
		aml_fail(a, -EINVAL);
	aml_byte(a, (uint8_t)(AML_LOCAL0_OP + (n & 7)));
}

void aml_arg(struct aml *a, unsigned int n)
{
	if (n > 6)
		aml_fail(a, -EINVAL);
	aml_byte(a, (uint8_t)(AML_ARG0_OP + (n & 7)));
}

/* DefNotify := NotifyOp NotifyObject NotifyValue. */
void aml_notify(struct aml *a, const char *object, uint64_t value)
{
	aml_byte(a, AML_NOTIFY_OP);
	aml_namestring(a, object);
	aml_integer(a, value);
}

void aml_call0(struct aml *a, const char *path)
{
	aml_namestring(a, path);
}

/* Address space descriptors: a large item (6.4.3: tag byte, 16-bit
 * length) with resource type, general flags (producer, PosDecode, MinFixed
 * and MaxFixed: 0x0C), type-specific flags, then granularity, min, max,
 * translation offset and length, each a word or dword. */
#define RES_ADDR_GENERAL_FLAGS 0x0C
#define RES_TYPE_MEMORY        0
#define RES_TYPE_IO            1
#define RES_TYPE_BUS           2

static void res_word_address(struct aml *a, uint8_t type, uint8_t type_flags, uint16_t min, uint16_t max)
{
	uint8_t d[16] = { 0x88, 13, 0, type, RES_ADDR_GENERAL_FLAGS, type_flags };
	uint16_t len = (uint16_t)(max - min + 1);

	if (max < min) {
		aml_fail(a, -EINVAL);
		return;
	}
	/* granularity 0 at 6, min at 8, max at 10, translation 0 at 12, length at 14 */
	d[8] = (uint8_t)min, d[9] = (uint8_t)(min >> 8);
	d[10] = (uint8_t)max, d[11] = (uint8_t)(max >> 8);
	d[14] = (uint8_t)len, d[15] = (uint8_t)(len >> 8);
	aml_bytes(a, d, sizeof(d));
}

void aml_res_word_bus(struct aml *a, uint16_t min, uint16_t max)
{
	res_word_address(a, RES_TYPE_BUS, 0, min, max);
}

void aml_res_word_io(struct aml *a, uint16_t min, uint16_t max)
{
	res_word_address(a, RES_TYPE_IO, 0x03 /* EntireRange */, min, max);
}

void aml_res_dword_memory(struct aml *a, uint32_t min, uint32_t max)
{
	uint8_t d[26] = { 0x87, 23, 0, RES_TYPE_MEMORY, RES_ADDR_GENERAL_FLAGS,
			  0x01 /* ReadWrite, NonCacheable */ };
	uint32_t len = max - min + 1;

	if (max < min) {
		aml_fail(a, -EINVAL);
		return;
	}
	/* granularity 0 at 6, min at 10, max at 14, translation 0 at 18, length at 22 */
	for (int i = 0; i < 4; i++) {
		d[10 + i] = (uint8_t)(min >> (8 * i));
		d[14 + i] = (uint8_t)(max >> (8 * i));
		d[22 + i] = (uint8_t)(len >> (8 * i));
	}
	aml_bytes(a, d, sizeof(d));
}
