/* A domain's runtime directory as lodge-hyp makes and removes it
 * (src/hyp/rundir.c): it appears with its control socket listening and
 * goes whole, so a reader listing RUNDIR (lodge list, which takes a
 * directory without an answering socket for a dead domain's and removes
 * it) never sees one half made.  A live domain's directory is refused, a
 * dead one's reused with the new socket, a killed start's temporary one
 * removed, and no failure leaves anything behind. */
#include "ctl/ctl.h"
#include "log.h"
#include "rundir.h"
#include "runtime.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CYCLES 1000

static char run[64];
static const struct ctl_access private_access = { -1, -1, 0, 0 };

static void path(char *out, const char *name, const char *file)
{
	snprintf(out, 512, "%s/%s%s%s", run, name, file ? "/" : "", file ? file : "");
}

static bool exists(const char *name, const char *file)
{
	char p[512];
	struct stat st;

	path(p, name, file);
	return lstat(p, &st) == 0;
}

static mode_t mode_of(const char *name, const char *file)
{
	char p[512];
	struct stat st;

	path(p, name, file);
	return lstat(p, &st) == 0 ? st.st_mode & 07777 : 0;
}

/* Whether RUN/NAME/control answers a connection. */
static bool answers(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	runtime_path(sa.sun_path, sizeof(sa.sun_path), run, name, RT_CONTROL);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* A dead lodge-hyp's socket: bound, then closed (it refuses). */
static void dead_socket(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	runtime_path(sa.sun_path, sizeof(sa.sun_path), run, name, RT_CONTROL);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		perror("bind");
	close(fd);
}

static void put_file(const char *name, const char *file, const char *text)
{
	char p[512];

	path(p, name, file);
	unit_write_file(p, text);
}

static bool file_says(const char *name, const char *file, const char *text)
{
	char p[512], buf[128] = "";
	FILE *f;

	path(p, name, file);
	if (!(f = fopen(p, "r")))
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

/* ---- a reader listing RUNDIR while domains come and go ------------------- */

static atomic_bool stop;
static atomic_uint seen, half_made;

/* What lodge list does first: every name that is not hidden, and its
 * socket.  The directory is held open while its socket is looked for, so
 * "half made" means that very directory, still under its name, lacked the
 * socket: not one removed meanwhile and replaced by the next start. */
static void *reader(void *arg)
{
	char p[sizeof(run) + 300];
	struct stat held, named;

	while (!atomic_load(&stop)) {
		DIR *d = opendir(run);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			int dfd;

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", run, de->d_name);
			if ((dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
				continue;          /* gone already */
			if (fstatat(dfd, "control", &named, AT_SYMLINK_NOFOLLOW) == 0)
				atomic_fetch_add(&seen, 1);
			else if (fstat(dfd, &held) == 0 && lstat(p, &named) == 0 &&
				 held.st_dev == named.st_dev && held.st_ino == named.st_ino)
				atomic_fetch_add(&half_made, 1);
			close(dfd);
		}
		if (d)
			closedir(d);
	}
	return NULL;
}

int main(void)
{
	char dir[4096], p[512], why[160];
	pthread_t thread;
	int fd, fd2, i, bad = 0;

	log_init("test-rundir");
	snprintf(run, sizeof(run), "/tmp/lodge-rundir-%d", (int)getpid());
	mkdir(run, 0755);

	fd = rundir_create(run, "web", &private_access, dir, sizeof(dir));
	CHECK("made: the control socket listens", fd >= 0 && answers("web"));
	CHECK("made: RUNDIR/NAME is the directory", strcmp(dir, run) > 0 && strstr(dir, "/web") != NULL);
	CHECK("made: mode 0700, nothing left under the temporary name",
	      mode_of("web", NULL) == 0700 && !exists(".web", NULL));

	fd2 = rundir_create(run, "web", &private_access, dir, sizeof(dir));
	CHECK("a live domain's name is refused: -EEXIST", fd2 == -EEXIST);
	CHECK("... and its directory is untouched", answers("web") && !exists(".web", NULL));
	close(fd);

	CHECK("removed whole", rundir_remove(run, "web", NULL) == 0 && !exists("web", NULL) && !exists(".web", NULL));
	CHECK("removing what is not there: -ENOENT", rundir_remove(run, "web", NULL) == -ENOENT);

	/* A dead lodge-hyp's leftovers: a socket that refuses, its log. */
	path(p, "old", NULL);
	mkdir(p, 0755);
	dead_socket("old");
	put_file("old", "lodge-hyp.log", "the last boot\n");
	fd = rundir_create(run, "old", &(struct ctl_access){ 1234, -1, 0, 0 }, dir, sizeof(dir));
	CHECK("a dead domain's directory gets the new socket", fd >= 0 && answers("old"));
	CHECK("... shared: the directory 0711, the socket 0666",
	      mode_of("old", NULL) == 0711 && (mode_of("old", "control") & 0777) == 0666);
	CHECK("... its other files are kept", file_says("old", "lodge-hyp.log", "the last boot\n"));
	CHECK("... nothing left under the temporary name", !exists(".old", NULL));
	close(fd);
	rundir_remove(run, "old", NULL);

	/* A start killed before its rename left RUNDIR/.NAME. */
	path(p, ".killed", NULL);
	mkdir(p, 0700);
	put_file(".killed", "control", "");
	fd = rundir_create(run, "killed", &private_access, dir, sizeof(dir));
	CHECK("a killed start's temporary directory is removed, the start goes on",
	      fd >= 0 && answers("killed") && !exists(".killed", NULL));
	close(fd);
	rundir_remove(run, "killed", NULL);

	/* Something that is not a directory has the name. */
	put_file("file", NULL, "not a directory\n");
	fd = rundir_create(run, "file", &private_access, dir, sizeof(dir));
	CHECK("a file of that name: refused, -ENOTDIR", fd == -ENOTDIR);
	CHECK("... the file untouched, nothing left",
	      file_says("file", NULL, "not a directory\n") && !exists(".file", NULL));
	path(p, "file", NULL);
	unlink(p);

	/* A name too long for a socket address. */
	memset(why, 'x', sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	fd = rundir_create(run, why, &private_access, dir, sizeof(dir));
	CHECK("a name too long for a socket: -ENAMETOOLONG", fd == -ENAMETOOLONG);

	/* Domains come and go while a reader lists RUNDIR as lodge list does. */
	pthread_create(&thread, NULL, reader, NULL);
	/* At least CYCLES, and on until the reader has seen it often enough
	 * for the check to mean something (a loaded machine starves it). */
	for (i = 0; i < CYCLES || (atomic_load(&seen) < 100 && i < 50 * CYCLES); i++) {
		if ((fd = rundir_create(run, "busy", &private_access, dir, sizeof(dir))) < 0) {
			bad++;
			continue;
		}
		close(fd);
		if (rundir_remove(run, "busy", NULL))
			bad++;
	}
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	snprintf(why, sizeof(why), "%d starts and ends under a reader: it saw the directory %u times, "
		 "never without its socket", i, atomic_load(&seen));
	CHECK(why, bad == 0 && atomic_load(&seen) >= 100 && atomic_load(&half_made) == 0);
	if (atomic_load(&half_made))
		printf("   (seen half made %u times, %d failures)\n", atomic_load(&half_made), bad);

	rmdir(run);
	UNIT_EXIT();
}
