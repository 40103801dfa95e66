/* Fixed ACPI Description Table (ACPI 6.0, 5.2.9): revision 6, 276 bytes.
 * Not hardware-reduced: the PM1a event and control blocks and the GPE0
 * block are real (see dev/acpi_pm.c), so the fixed power button, S5
 * through PM1a_CNT and the PCI hot-plug GPE work. */
#include "tables.h"
#include "pcihp.h"
#include "platform.h"

#include <errno.h>
#include <string.h>

struct acpi_fadt {
	struct acpi_table_header header;
	uint32_t firmware_ctrl;          /* 36: FACS */
	uint32_t dsdt;                   /* 40 */
	uint8_t reserved0;               /* 44: INT_MODEL in ACPI 1.0 */
	uint8_t preferred_pm_profile;    /* 45 */
	uint16_t sci_int;                /* 46 */
	uint32_t smi_cmd;                /* 48 */
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;   /* 52 */
	uint32_t pm1a_evt_blk, pm1b_evt_blk;                         /* 56 */
	uint32_t pm1a_cnt_blk, pm1b_cnt_blk;                         /* 64 */
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;        /* 72 */
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;   /* 88 */
	uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;      /* 92 */
	uint16_t p_lvl2_lat, p_lvl3_lat;                             /* 96 */
	uint16_t flush_size, flush_stride;                           /* 100 */
	uint8_t duty_offset, duty_width;                             /* 104 */
	uint8_t day_alrm, mon_alrm, century;                         /* 106 */
	uint16_t iapc_boot_arch;         /* 109 */
	uint8_t reserved1;               /* 111 */
	uint32_t flags;                  /* 112 */
	struct acpi_gas reset_reg;       /* 116 */
	uint8_t reset_value;             /* 128 */
	uint16_t arm_boot_arch;          /* 129 */
	uint8_t minor_version;           /* 131 */
	uint64_t x_firmware_ctrl;        /* 132 */
	uint64_t x_dsdt;                 /* 140 */
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk;              /* 148 */
	struct acpi_gas x_pm1a_cnt_blk, x_pm1b_cnt_blk;              /* 172 */
	struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk;                 /* 196 */
	struct acpi_gas x_gpe0_blk, x_gpe1_blk;                      /* 220 */
	struct acpi_gas sleep_control_reg;                           /* 244 */
	struct acpi_gas sleep_status_reg;                            /* 256 */
	uint64_t hypervisor_vendor_id;   /* 268 */
} __attribute__((packed));
static_assert(sizeof(struct acpi_fadt) == 276, "FADT revision 6 is 276 bytes");
static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC_BOOT_ARCH");
static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT Flags");
static_assert(offsetof(struct acpi_fadt, x_firmware_ctrl) == 132, "FADT X_FIRMWARE_CTRL");
static_assert(offsetof(struct acpi_fadt, x_pm1a_evt_blk) == 148, "FADT X_PM1a_EVT_BLK");
static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT SLEEP_CONTROL_REG");

#define FADT_REVISION        6
#define FADT_MINOR_VERSION   0       /* ACPI 6.0 */

/* Preferred_PM_Profile (5.2.9, table 5-34): 4 = Enterprise Server. */
#define PM_PROFILE_ENTERPRISE_SERVER 4

/* Fixed feature flags (5.2.9, table 5-35). */
#define FADT_F_WBINVD         (1u << 0)   /* WBINVD flushes all caches */
#define FADT_F_PROC_C1        (1u << 2)   /* C1 (HLT) on all processors */
#define FADT_F_PWR_BUTTON     (1u << 4)   /* set: power button is a control method device */
#define FADT_F_SLP_BUTTON     (1u << 5)   /* set: no fixed-feature sleep button */
#define FADT_F_RESET_REG_SUP  (1u << 10)  /* RESET_REG/RESET_VALUE are valid */
#define FADT_F_HW_REDUCED     (1u << 20)

/* IA-PC boot architecture flags (5.2.9.3, table 5-36). */
#define IAPC_BOOT_8042            (1u << 1)
#define IAPC_BOOT_VGA_NOT_PRESENT (1u << 2)

/* PM1 event block: PM1_STS and PM1_EN, 16 bits each (4.8.3.1). */
#define PM1_EVT_BLK_LEN 4
#define PM1_CNT_BLK_LEN 2

int acpi_fadt_write(struct acpi_area *a, uint64_t facs_gpa, uint64_t dsdt_gpa,
		    uint64_t *gpa)
{
	struct acpi_fadt *f = acpi_area_alloc(a, sizeof(*f), 16, gpa);

	if (!f)
		return -ENOSPC;
	/* Both tables live below 1 MiB; the 32-bit fields are what they need. */
	if (facs_gpa > UINT32_MAX || dsdt_gpa > UINT32_MAX)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	acpi_header_init(&f->header, "FACP", sizeof(*f), FADT_REVISION);
	f->minor_version = FADT_MINOR_VERSION;

	/* 5.2.9: at most one of FIRMWARE_CTRL and X_FIRMWARE_CTRL may be
	 * non-zero, so the FACS goes in the 32-bit field only.  X_DSDT has no
	 * such rule: both DSDT fields carry the same address. */
	f->firmware_ctrl = (uint32_t)facs_gpa;
	f->x_firmware_ctrl = 0;
	f->dsdt = (uint32_t)dsdt_gpa;
	f->x_dsdt = dsdt_gpa;

	f->preferred_pm_profile = PM_PROFILE_ENTERPRISE_SERVER;
	f->sci_int = IRQ_SCI;
	/* SMI_CMD 0: no SMM; ACPI_ENABLE/ACPI_DISABLE must then be 0 and
	 * PM1_CNT.SCI_EN reads as set (the hardware is always in ACPI mode). */
	f->smi_cmd = 0;

	f->pm1a_evt_blk = PORT_PM1A_EVT;
	f->pm1_evt_len = PM1_EVT_BLK_LEN;
	f->x_pm1a_evt_blk = acpi_gas_io(PORT_PM1A_EVT, PM1_EVT_BLK_LEN, ACPI_GAS_ACCESS_WORD);
	f->pm1a_cnt_blk = PORT_PM1A_CNT;
	f->pm1_cnt_len = PM1_CNT_BLK_LEN;
	f->x_pm1a_cnt_blk = acpi_gas_io(PORT_PM1A_CNT, PM1_CNT_BLK_LEN, ACPI_GAS_ACCESS_WORD);
	/* GPE0: the PCI hot-plug event (pcihp.h); its status and enable
	 * halves are byte registers to ACPICA. */
	f->gpe0_blk = PCIHP_GPE0_PORT;
	f->gpe0_blk_len = PCIHP_GPE0_LEN;
	f->x_gpe0_blk = acpi_gas_io(PCIHP_GPE0_PORT, PCIHP_GPE0_LEN, ACPI_GAS_ACCESS_BYTE);
	/* No PM1b, PM2, PM timer (optional since ACPI 5.0A) or GPE1 blocks. */

	/* C2/C3 latencies above 100/1000 us say "not supported" (5.2.9). */
	f->p_lvl2_lat = 101;
	f->p_lvl3_lat = 1001;
	/* CENTURY 0: the RTC has no century register the OS should use. */

	f->iapc_boot_arch = IAPC_BOOT_8042 | IAPC_BOOT_VGA_NOT_PRESENT;
	f->flags = FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_SLP_BUTTON |
		   FADT_F_RESET_REG_SUP;
	/* PWR_BUTTON clear: the fixed-feature power button in PM1 is used;
	 * HW_REDUCED clear: PM1 blocks are real. */

	/* RESET_REG (4.8.3.6): one byte in I/O space. */
	f->reset_reg = acpi_gas_io(PORT_ACPI_RESET, 1, ACPI_GAS_ACCESS_BYTE);
	f->reset_value = ACPI_RESET_VALUE;

	/* ACPI 5.0 sleep control/status registers (4.8.3.7): one byte each. */
	f->sleep_control_reg = acpi_gas_io(PORT_SLEEP_CTL, 1, ACPI_GAS_ACCESS_BYTE);
	f->sleep_status_reg = acpi_gas_io(PORT_SLEEP_STS, 1, ACPI_GAS_ACCESS_BYTE);

	acpi_table_finish(&f->header);
	return 0;
}
