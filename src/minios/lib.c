/* The few C library pieces a kernel needs. */
#include "minios.h"

void *memset(void *d, int c, size_t n)
{
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	void *ret = d;

	/* rep movsb: one instruction to emulate, however long the copy. */
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory");
	return ret;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (uint8_t)*a - (uint8_t)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (uint8_t)*a - (uint8_t)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (; *s; s++)
		if (*s == (char)c)
			return (char *)s;
	return c ? NULL : (char *)s;
}

/* Decimal, or hex with 0x. */
uint64_t strtou64(const char *s, const char **end)
{
	uint64_t v = 0;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		int d;

		if (*s >= '0' && *s <= '9') d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
		else break;
		v = v * base + d;
	}
	if (end)
		*end = s;
	return v;
}

struct out { char *buf; size_t size, len; };

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct out *o, uint64_t v, unsigned base, int width, char pad, int neg)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	while (n < width--)
		put(o, pad);
	while (n)
		put(o, tmp[--n]);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int width = 0, lng = 0;
		char pad = ' ';

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);

			put_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, width, pad, v < 0);
			break;
		}
		case 'u':
			put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width, pad, 0);
			break;
		case 'x':
			put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, width, pad, 0);
			break;
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_num(&o, (uint64_t)va_arg(ap, void *), 16, width, pad, 0);
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len = s ? (int)strlen(s) : 6;

			while (len < width--)
				put(&o, ' ');
			for (s = s ? s : "(null)"; *s; s++)
				put(&o, *s);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '%');
			put(&o, *fmt);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void printf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	uart_puts(buf);
}
