/* MC146818 CMOS real-time clock at ports 0x70/0x71, reporting the host's
 * UTC time in BCD.  Without it a guest reading the clock sees 0xFF, whose
 * "update in progress" bit never clears. */
#include "devices.h"
#include "bus.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define RTC_PORT      0x70
#define RTC_SECONDS   0x00
#define RTC_MINUTES   0x02
#define RTC_HOURS     0x04
#define RTC_WDAY      0x06
#define RTC_MDAY      0x07
#define RTC_MONTH     0x08
#define RTC_YEAR      0x09
#define RTC_REG_A     0x0a   /* bit 7: update in progress (never) */
#define RTC_REG_B     0x0b   /* bit 1: 24-hour mode; bit 2 clear: BCD */
#define RTC_REG_C     0x0c
#define RTC_REG_D     0x0d   /* bit 7: valid RAM and time */
#define RTC_CENTURY   0x32

static struct {
	pthread_mutex_t lock;
	uint8_t index;
	uint8_t cmos[128];
} rtc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint8_t bcd(unsigned v) { return (uint8_t)(((v / 10) << 4) | (v % 10)); }

static uint8_t rtc_time_reg(uint8_t reg)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	switch (reg) {
	case RTC_SECONDS: return bcd(tm.tm_sec);
	case RTC_MINUTES: return bcd(tm.tm_min);
	case RTC_HOURS:   return bcd(tm.tm_hour);
	case RTC_WDAY:    return bcd(tm.tm_wday + 1);
	case RTC_MDAY:    return bcd(tm.tm_mday);
	case RTC_MONTH:   return bcd(tm.tm_mon + 1);
	case RTC_YEAR:    return bcd(tm.tm_year % 100);
	case RTC_CENTURY: return bcd((tm.tm_year + 1900) / 100);
	case RTC_REG_A:   return 0x26;   /* 32.768 kHz base, 1024 Hz rate */
	case RTC_REG_B:   return 0x02;
	case RTC_REG_C:   return 0x00;
	case RTC_REG_D:   return 0x80;
	}
	return rtc.cmos[reg];
}

static uint64_t rtc_read(void *dev, uint64_t off, unsigned size)
{
	uint8_t v;

	pthread_mutex_lock(&rtc.lock);
	v = off == 0 ? rtc.index : rtc_time_reg(rtc.index);
	pthread_mutex_unlock(&rtc.lock);
	return v;
}

static void rtc_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	pthread_mutex_lock(&rtc.lock);
	if (off == 0)
		rtc.index = val & 0x7f;   /* bit 7 is the NMI mask */
	else if (rtc.index > RTC_REG_D)
		rtc.cmos[rtc.index] = val;    /* CMOS RAM; the clock itself is the host's */
	pthread_mutex_unlock(&rtc.lock);
}

static const struct bus_ops rtc_ops = { .read = rtc_read, .write = rtc_write };

/* Save and restore: the index latch and CMOS RAM.  The clock registers
 * read the host's time, so a restored guest sees the time of day move on
 * as it did in reality while it was saved. */
#define RTC_STATE_VERSION 1

static int rtc_save(void *obj, struct state_buf *b)
{
	pthread_mutex_lock(&rtc.lock);
	state_put_u8(b, rtc.index);
	state_put(b, rtc.cmos, sizeof(rtc.cmos));
	pthread_mutex_unlock(&rtc.lock);
	return 0;
}

static int rtc_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint8_t index = state_get_u8(in), cmos[sizeof(rtc.cmos)];

	state_get(in, cmos, sizeof(cmos));
	if (in->bad)
		return -EBADMSG;
	if (index & 0x80) {
		snprintf(why, whylen, "rtc: CMOS index %#x beyond its 128 bytes", index);
		return -EINVAL;
	}
	pthread_mutex_lock(&rtc.lock);
	rtc.index = index;
	memcpy(rtc.cmos, cmos, sizeof(cmos));
	pthread_mutex_unlock(&rtc.lock);
	return 0;
}

static const struct state_ops rtc_state_ops = {
	.save = rtc_save, .load = rtc_load, .version = RTC_STATE_VERSION,
};

int rtc_init(struct domain *dom)
{
	int rc = bus_register(BUS_PIO, RTC_PORT, 2, &rtc_ops, NULL, "rtc");

	return rc ? rc : state_register("rtc", &rtc_state_ops, NULL);
}
