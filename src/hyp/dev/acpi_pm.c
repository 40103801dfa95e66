/* ACPI fixed hardware as our FADT describes it: PM1a event and control
 * blocks, the GPE0 block, the ACPI 5 sleep control/status registers and
 * the reset register.  Entering S5 powers the domain off; the reset
 * register reboots it.  PM1 and GPE0 events share the one SCI. */
#include "devices.h"
#include "bus.h"
#include "domain.h"
#include "pcihp.h"
#include "platform.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define PM1_PWRBTN         0x0100     /* PWRBTN_STS / PWRBTN_EN */
#define PM1_CNT_SCI_EN     0x0001
#define PM1_CNT_SLP_EN     0x2000
#define PM1_CNT_SLP_TYP(v) (((v) >> 10) & 7)
#define SLEEP_CTL_SLP_EN   0x20
#define SLEEP_CTL_SLP_TYP(v) (((v) >> 2) & 7)

struct acpi_pm {
	struct domain *dom;
	pthread_mutex_t lock;
	uint16_t pm1_sts, pm1_en, pm1_cnt;
	uint16_t gpe0_sts, gpe0_en;    /* one bit per GPE: PCIHP_GPE0_LEN / 2 bytes each */
	int sci_level;
};

static struct acpi_pm acpi_pm = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void acpi_pm_sleep(struct acpi_pm *pm, unsigned slp_typ)
{
	if (slp_typ == ACPI_S5_SLP_TYP)
		domain_end(pm->dom, DOMAIN_POWEROFF, "guest powered off (ACPI S5)");
	/* Other sleep states are not offered in the DSDT; ignore them. */
}

/* Lock held. The SCI is level-triggered: asserted while an enabled
 * status bit is set, released when the guest clears it. */
static void acpi_pm_update_sci(struct acpi_pm *pm)
{
	int level = (pm->pm1_sts & pm->pm1_en) || (pm->gpe0_sts & pm->gpe0_en);

	if (level != pm->sci_level) {
		pm->sci_level = level;
		kvm_irq_line(pm->dom, IRQ_SCI, level);
	}
}

void acpi_pm_power_button(void)
{
	pthread_mutex_lock(&acpi_pm.lock);
	acpi_pm.pm1_sts |= PM1_PWRBTN;
	acpi_pm_update_sci(&acpi_pm);
	pthread_mutex_unlock(&acpi_pm.lock);
}

void acpi_pm_gpe_raise(unsigned int gpe)
{
	pthread_mutex_lock(&acpi_pm.lock);
	acpi_pm.gpe0_sts |= (uint16_t)(1u << gpe);
	acpi_pm_update_sci(&acpi_pm);
	pthread_mutex_unlock(&acpi_pm.lock);
}

/* GPE0_BLK: GPE0_STS at +0 (write 1 to clear), GPE0_EN at +2; ACPICA
 * reads and writes them a byte at a time. */
static uint64_t gpe0_read(void *dev, uint64_t off, unsigned size)
{
	struct acpi_pm *pm = dev;
	uint32_t both;

	pthread_mutex_lock(&pm->lock);
	both = pm->gpe0_sts | ((uint32_t)pm->gpe0_en << 16);
	pthread_mutex_unlock(&pm->lock);
	return (both >> (off * 8)) & (size == 4 ? 0xffffffffu : size == 2 ? 0xffff : 0xff);
}

static void gpe0_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct acpi_pm *pm = dev;
	uint32_t mask = (size == 4 ? 0xffffffffu : size == 2 ? 0xffff : 0xff) << (off * 8);
	uint32_t v = (uint32_t)(val << (off * 8)) & mask;

	pthread_mutex_lock(&pm->lock);
	pm->gpe0_sts &= ~(uint16_t)(v & 0xffff);
	if (mask >> 16)
		pm->gpe0_en = (uint16_t)((pm->gpe0_en & ~(mask >> 16)) | (v >> 16));
	acpi_pm_update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

/* PM1a_EVT_BLK: PM1_STS at +0 (write 1 to clear), PM1_EN at +2. */
static uint64_t pm1_evt_read(void *dev, uint64_t off, unsigned size)
{
	struct acpi_pm *pm = dev;
	uint32_t both;

	pthread_mutex_lock(&pm->lock);
	both = pm->pm1_sts | ((uint32_t)pm->pm1_en << 16);
	pthread_mutex_unlock(&pm->lock);
	return (both >> (off * 8)) & (size == 4 ? 0xffffffffu : size == 2 ? 0xffff : 0xff);
}

static void pm1_evt_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct acpi_pm *pm = dev;
	uint32_t mask = (size == 4 ? 0xffffffffu : size == 2 ? 0xffff : 0xff) << (off * 8);
	uint32_t v = (uint32_t)(val << (off * 8)) & mask;

	pthread_mutex_lock(&pm->lock);
	pm->pm1_sts &= ~(uint16_t)(v & mask & 0xffff);
	if (mask >> 16)
		pm->pm1_en = (pm->pm1_en & ~(mask >> 16)) | (v >> 16);
	acpi_pm_update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

static uint64_t pm1_cnt_read(void *dev, uint64_t off, unsigned size)
{
	struct acpi_pm *pm = dev;

	/* SCI_EN always set: there is no SMI handler, ACPI is always on. */
	return ((pm->pm1_cnt | PM1_CNT_SCI_EN) >> (off * 8)) & (size == 1 ? 0xff : 0xffff);
}

static void pm1_cnt_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct acpi_pm *pm = dev;
	uint16_t v = (uint16_t)(val << (off * 8));

	if (size == 1 && off == 0)
		v = (pm->pm1_cnt & 0xff00) | (uint8_t)val;
	else if (size == 1)
		v = (pm->pm1_cnt & 0x00ff) | (uint16_t)(val << 8);
	pm->pm1_cnt = v & ~PM1_CNT_SLP_EN;   /* SLP_EN reads as zero */
	if (v & PM1_CNT_SLP_EN)
		acpi_pm_sleep(pm, PM1_CNT_SLP_TYP(v));
}

static uint64_t sleep_read(void *dev, uint64_t off, unsigned size) { return 0; }

static void sleep_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct acpi_pm *pm = dev;

	if (off == PORT_SLEEP_CTL - PORT_SLEEP_CTL && (val & SLEEP_CTL_SLP_EN))
		acpi_pm_sleep(pm, SLEEP_CTL_SLP_TYP(val));
}

static void reset_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct acpi_pm *pm = dev;

	if ((uint8_t)val == ACPI_RESET_VALUE)
		domain_end(pm->dom, DOMAIN_REBOOT, "guest rebooted (ACPI reset register)");
}

static const struct bus_ops pm1_evt_ops = { .read = pm1_evt_read, .write = pm1_evt_write };
static const struct bus_ops gpe0_ops = { .read = gpe0_read, .write = gpe0_write };
static const struct bus_ops pm1_cnt_ops = { .read = pm1_cnt_read, .write = pm1_cnt_write };
static const struct bus_ops sleep_ops = { .read = sleep_read, .write = sleep_write };
static const struct bus_ops reset_ops = { .read = sleep_read, .write = reset_write };

/* Save and restore: PM1 status, enable and control, GPE0 status and
 * enable (version 2); the SCI level follows. */
#define ACPI_PM_STATE_VERSION 2

static int acpi_pm_save(void *obj, struct state_buf *b)
{
	struct acpi_pm *pm = obj;

	pthread_mutex_lock(&pm->lock);
	state_put_u16(b, pm->pm1_sts);
	state_put_u16(b, pm->pm1_en);
	state_put_u16(b, pm->pm1_cnt);
	state_put_u16(b, pm->gpe0_sts);
	state_put_u16(b, pm->gpe0_en);
	pthread_mutex_unlock(&pm->lock);
	return 0;
}

static int acpi_pm_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct acpi_pm *pm = obj;
	uint16_t sts = state_get_u16(in), en = state_get_u16(in), cnt = state_get_u16(in);
	uint16_t gpe_sts = state_get_u16(in), gpe_en = state_get_u16(in);

	if (in->bad)
		return -EBADMSG;
	if (cnt & PM1_CNT_SLP_EN) {
		snprintf(why, whylen, "acpi-pm: PM1 control %#x has SLP_EN, which reads as zero", cnt);
		return -EINVAL;
	}
	pthread_mutex_lock(&pm->lock);
	pm->pm1_sts = sts;
	pm->pm1_en = en;
	pm->pm1_cnt = cnt;
	pm->gpe0_sts = gpe_sts;
	pm->gpe0_en = gpe_en;
	acpi_pm_update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
	return 0;
}

static const struct state_ops acpi_pm_state_ops = {
	.save = acpi_pm_save, .load = acpi_pm_load, .version = ACPI_PM_STATE_VERSION,
};

int acpi_pm_init(struct domain *dom)
{
	int rc;

	acpi_pm.dom = dom;
	if ((rc = bus_register(BUS_PIO, PORT_PM1A_EVT, 4, &pm1_evt_ops, &acpi_pm, "pm1-evt")) ||
	    (rc = bus_register(BUS_PIO, PORT_PM1A_CNT, 2, &pm1_cnt_ops, &acpi_pm, "pm1-cnt")) ||
	    (rc = bus_register(BUS_PIO, PCIHP_GPE0_PORT, PCIHP_GPE0_LEN, &gpe0_ops, &acpi_pm, "gpe0")) ||
	    (rc = bus_register(BUS_PIO, PORT_SLEEP_CTL, 2, &sleep_ops, &acpi_pm, "sleep")) ||
	    (rc = bus_register(BUS_PIO, PORT_ACPI_RESET, 1, &reset_ops, &acpi_pm, "reset")))
		return rc;
	return state_register("acpi-pm", &acpi_pm_state_ops, &acpi_pm);
}
