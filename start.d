start.o: src/lib/domain/start.c src/common/cgroup.h src/common/schema.h \
 src/lib/include/default-guest.h src/lib/include/config.h \
 src/common/schema.h src/lib/domain/internal.h src/lib/domain/client.h \
 src/lib/include/lodge.h src/lib/include/lodge/handle.h \
 src/lib/include/config.h src/lib/include/lodge/status.h \
 src/lib/include/lodge/handle.h src/lib/include/lodge/devices.h \
 src/lib/include/lodge/status.h src/lib/include/lodge/domain.h \
 src/lib/include/lodge/devices.h src/lib/include/lodge/migrate.h \
 src/lib/include/lodge/domain.h src/lib/include/lodge/host.h \
 src/lib/include/lodge/network.h src/lib/include/lodge/install.h \
 src/lib/include/lodge/events.h src/lib/include/lodge/network.h \
 src/common/runtime.h
src/common/cgroup.h:
src/common/schema.h:
src/lib/include/default-guest.h:
src/lib/include/config.h:
src/common/schema.h:
src/lib/domain/internal.h:
src/lib/domain/client.h:
src/lib/include/lodge.h:
src/lib/include/lodge/handle.h:
src/lib/include/config.h:
src/lib/include/lodge/status.h:
src/lib/include/lodge/handle.h:
src/lib/include/lodge/devices.h:
src/lib/include/lodge/status.h:
src/lib/include/lodge/domain.h:
src/lib/include/lodge/devices.h:
src/lib/include/lodge/migrate.h:
src/lib/include/lodge/domain.h:
src/lib/include/lodge/host.h:
src/lib/include/lodge/network.h:
src/lib/include/lodge/install.h:
src/lib/include/lodge/events.h:
src/lib/include/lodge/network.h:
src/common/runtime.h:
