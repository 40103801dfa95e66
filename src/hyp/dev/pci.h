/* A PCI host bridge with configuration mechanism #1 (ports 0xCF8/0xCFC),
 * which a guest finds without ACPI help, and bus 0 with up to 32 devices.
 * Memory BARs live in the 3-4 GiB hole and follow the guest if it moves
 * them; each device is a config space plus a small table of operations. */
#ifndef LODGE_PCI_H
#define LODGE_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_CFG_SIZE        256
#define PCI_MAX_BARS        6
#define PCI_VENDOR_ID       0x00
#define PCI_DEVICE_ID       0x02
#define PCI_COMMAND         0x04
#define PCI_COMMAND_IO      0x1
#define PCI_COMMAND_MEMORY  0x2
#define PCI_COMMAND_MASTER  0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_STATUS          0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_REVISION_ID     0x08
#define PCI_CLASS_PROG      0x09
#define PCI_HEADER_TYPE     0x0e
#define PCI_BAR0            0x10
#define PCI_SUBSYSTEM_VENDOR_ID 0x2c
#define PCI_SUBSYSTEM_ID    0x2e
#define PCI_CAPABILITY_LIST 0x34
#define PCI_INTERRUPT_LINE  0x3c
#define PCI_INTERRUPT_PIN   0x3d
#define PCI_CAP_ID_MSIX     0x11
#define PCI_CAP_ID_VNDR     0x09

struct pci_dev;

struct pci_dev_ops {
	/* Accesses to memory BAR bar at offset off (decoded, enabled). */
	uint64_t (*bar_read)(struct pci_dev *pd, unsigned bar, uint64_t off, unsigned size);
	void (*bar_write)(struct pci_dev *pd, unsigned bar, uint64_t off, unsigned size, uint64_t val);
	/* After the generic handling of a config write (capabilities). */
	void (*cfg_write)(struct pci_dev *pd, unsigned off, unsigned size, uint32_t val);
	/* Before a config read of [off, off+size): refresh derived fields. */
	void (*cfg_read)(struct pci_dev *pd, unsigned off, unsigned size);
	/* A memory BAR was moved or its decoding turned on/off: gpa 0 = off. */
	void (*bar_moved)(struct pci_dev *pd, unsigned bar, uint64_t gpa);
};

struct pci_dev {
	uint8_t cfg[PCI_CFG_SIZE];
	uint32_t bar_size[PCI_MAX_BARS];   /* power of two; 0: not implemented */
	uint8_t cap_next;                  /* where the next capability goes */
	uint8_t slot;
	unsigned gsi;                      /* INTx line */
	const struct pci_dev_ops *ops;
	void *priv;
	const char *name;
};

/* Set up the host bridge and its buses; once, before pci_register(). */
int pci_init(void);
/* Fill the header: IDs, class (24 bits), INTx pin A. */
void pci_dev_init(struct pci_dev *pd, uint16_t vendor, uint16_t device, uint32_t class_code,
		  uint8_t revision, uint16_t subsys_vendor, uint16_t subsys_id);
/* Declare a 32-bit memory BAR of size bytes (a power of two, >= 4 KiB). */
void pci_dev_add_bar(struct pci_dev *pd, unsigned bar, uint32_t size);
/* Append a capability of len bytes (id, next and body); returns its offset. */
unsigned pci_dev_add_cap(struct pci_dev *pd, const void *cap, unsigned len);
/* Put the device on bus 0 in the first free slot (pci_register) or in
 * slot (1-31; -EBUSY if taken), assign its BARs (from the slot's own
 * window: the same addresses whenever a device is in that slot) and INTx
 * line.  0 or -errno (-ENOSPC: no free slot). */
int pci_register(struct pci_dev *pd);
int pci_register_slot(struct pci_dev *pd, unsigned slot);
/* Take the device off the bus (hot-unplug): its BARs stop decoding
 * (bar_moved to 0) and its slot reads as empty (vendor 0xffff). */
void pci_unregister(struct pci_dev *pd);
/* The first free slot, or -ENOSPC; the slots holding a device (bit N:
 * slot N; the host bridge's slot 0 not included). */
int pci_free_slot(void);
uint32_t pci_present_mask(void);
struct pci_dev *pci_slot_dev(unsigned slot);     /* NULL: empty */
/* The current guest address of a memory BAR (0 if not decoded). */
uint64_t pci_bar_gpa(const struct pci_dev *pd, unsigned bar);

#endif
