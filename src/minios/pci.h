#ifndef MINIOS_PCI_H
#define MINIOS_PCI_H

#include <stdint.h>

uint32_t pci_read32(unsigned dev, unsigned reg);
uint16_t pci_read16(unsigned dev, unsigned reg);
uint8_t pci_read8(unsigned dev, unsigned reg);
void pci_write32(unsigned dev, unsigned reg, uint32_t v);
void pci_write16(unsigned dev, unsigned reg, uint16_t v);
uint64_t pci_bar(unsigned dev, unsigned bar);
unsigned pci_find_cap(unsigned dev, uint8_t id, unsigned from);
int pci_msix_enable(unsigned dev, unsigned vector);

#endif
