# Lodge Mini-OS: a freestanding guest kernel, an ELF64 with a PVH entry note.
MINIOS_DIR := src/minios
MINIOS_ELF := $(BUILD)/minios/minios.elf
MINIOS_SRC := $(wildcard $(MINIOS_DIR)/*.c) $(wildcard $(MINIOS_DIR)/*.S)
MINIOS_OBJ := $(patsubst $(MINIOS_DIR)/%,$(BUILD)/minios/%.o,$(MINIOS_SRC))
# No SSE: the kernel never sets up XSAVE state, and every instruction it
# runs in kernel mode may be emulated (PVM), so the code stays plain.
MINIOS_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter $(WERROR) -ffreestanding -nostdlib -fno-pic \
	-fno-pie -mno-red-zone -mno-sse -mno-mmx -mno-sse2 -mno-avx -mgeneral-regs-only \
	-fno-stack-protector -fno-asynchronous-unwind-tables -fno-builtin \
	-I$(MINIOS_DIR) -MMD -MP

$(BUILD)/minios/%.c.o: $(MINIOS_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(MINIOS_CFLAGS) -c -o $@ $<
$(BUILD)/minios/%.S.o: $(MINIOS_DIR)/%.S
	@mkdir -p $(@D)
	$(CC) $(MINIOS_CFLAGS) -c -o $@ $<
$(MINIOS_ELF): $(MINIOS_OBJ) $(MINIOS_DIR)/minios.ld
	$(LD) -m elf_x86_64 -nostdlib -z max-page-size=4096 -z noexecstack --no-warn-rwx-segments -T $(MINIOS_DIR)/minios.ld -o $@ $(MINIOS_OBJ)
