/* The guest memory map both boot protocols hand over (e820 for Linux's
 * boot_params, the same ranges as hvm_memmap entries for PVH). */
#include "boot.h"
#include "platform.h"

unsigned e820_build(const struct guest_mem *mem, struct e820_entry_out *out)
{
	unsigned n = 0;

	out[n++] = (struct e820_entry_out){ 0, GPA_EBDA, E820_RAM };
	out[n++] = (struct e820_entry_out){ GPA_EBDA, 0xA0000 - GPA_EBDA, E820_RESERVED };
	/* The ACPI tables live in the BIOS area so a legacy RSDP scan finds
	 * them; reserved (not reclaimable) because the RSDP must stay. */
	out[n++] = (struct e820_entry_out){ GPA_ACPI_BASE, GPA_ACPI_END - GPA_ACPI_BASE, E820_RESERVED };
	if (mem->low_size > GPA_KERNEL_LOW)
		out[n++] = (struct e820_entry_out){ GPA_KERNEL_LOW,
			mem->low_size - GPA_KERNEL_LOW, E820_RAM };
	if (mem->high_size)
		out[n++] = (struct e820_entry_out){ GPA_HIGH_RAM_BASE, mem->high_size, E820_RAM };
	return n;
}
