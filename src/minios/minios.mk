# Placeholder until Mini-OS lands (owned by the Mini-OS work).
MINIOS_ELF := $(BUILD)/minios/minios.elf
