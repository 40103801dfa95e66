/* The console WebSocket (protocol "lodge-console", path
 * /api/ws/console/NAME, ?force=1 to take it over): the guest's serial
 * bytes both ways as binary frames, as `lodge console` relays them.
 *
 * A domain has one console client at a time (lodge-hyp's rule): without
 * force one that is in use is refused with a text frame
 * {"error": why, "in_use": true} and the socket closed, so the page can ask
 * before it takes it over, as `lodge console --force`.  A viewer reads
 * only: what it sends is dropped, and it may not take a console over.
 * Frames from the browser are capped at CONSOLE_FRAME_MAX; the guest's
 * bytes wait in a buffer of CONSOLE_BUF, and while it is full the console
 * is not read (the guest's serial port waits, as on a slow terminal). */
#include "web.h"

#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONSOLE_PATH "/api/ws/console/"
#define CONSOLE_BUF (64 * 1024)
#define CONSOLE_FRAME_MAX 4096

struct console_conn {
	struct web_session *session;
	char sid[WEB_TOKEN_HEX + 1];
	char name[DOMAIN_NAME_MAX];
	bool force, readonly, established;
	int fd;                           /* the console; -1 none */
	struct lws *wsi;                  /* the WebSocket */
	struct lws *raw;                  /* fd in the loop, a child of wsi (its opaque data: this) */
	unsigned char out[LWS_PRE + CONSOLE_BUF];
	size_t out_len;
	char *note;                       /* a text frame to send, then close (malloc'd) */
	size_t frame_len;                 /* of the browser's message so far */
};

static void note_close(struct lws *wsi, struct console_conn *c, json_t *j)
{
	free(c->note);
	c->note = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	lws_callback_on_writable(wsi);
}

static int console_raw_cb(struct lws *raw, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct console_conn *c = lws_get_opaque_user_data(raw);
	struct lws *wsi = c ? c->wsi : NULL;
	ssize_t got;

	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!c || c->fd < 0)
			return -1;
		if (c->out_len == CONSOLE_BUF) {
			lws_rx_flow_control(raw, 0);
			return 0;
		}
		got = read(c->fd, c->out + LWS_PRE + c->out_len, CONSOLE_BUF - c->out_len);
		if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR))) {
			/* Taken over by another client, or the domain ended. */
			c->raw = NULL;
			note_close(wsi, c, json_pack("{s:s}", "closed", "the console ended (taken over, or the domain is gone)"));
			return -1;
		}
		if (got > 0) {
			c->out_len += (size_t)got;
			lws_callback_on_writable(wsi);
		}
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (c) {
			c->raw = NULL;
			c->fd = -1;           /* lws closes it */
		}
		return 0;
	default:
		return 0;
	}
}

static int attach(struct lws *wsi, struct console_conn *c)
{
	struct lodge_err err;
	lws_adopt_desc_t ad = { 0 };
	int fd = lodge_console_open(web_lodge(), c->name, c->force, &err);

	if (fd < 0) {
		note_close(wsi, c, json_pack("{s:s,s:b}", "error", err.msg, "in_use", strstr(err.msg, "in use") != NULL));
		return 0;
	}
	c->fd = fd;
	ad.vh = lws_get_vhost(wsi);
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = "lodge-console-fd";
	ad.parent = wsi;
	ad.opaque = c;
	c->wsi = wsi;
	if (!(c->raw = lws_adopt_descriptor_vhost_via_info(&ad))) {
		c->fd = -1;                   /* closed by lws */
		note_close(wsi, c, json_pack("{s:s}", "error", "cannot watch the console"));
	}
	return 0;
}

static void detach(struct console_conn *c)
{
	if (c->raw) {
		lws_set_opaque_user_data(c->raw, NULL);
		lws_set_timeout(c->raw, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
		c->raw = NULL;
	} else if (c->fd >= 0) {
		close(c->fd);
	}
	c->fd = -1;
	free(c->note);
	c->note = NULL;
}

static int console_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct console_conn *c = user;
	char arg[16];
	const char *force;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		c->fd = -1;
		if (!(c->session = web_ws_admit(wsi, CONSOLE_PATH, c->name, sizeof(c->name))))
			return -1;
		memcpy(c->sid, c->session->id, sizeof(c->sid));
		c->readonly = c->session->role != WEB_ADMIN;
		force = lws_get_urlarg_by_name(wsi, "force=", arg, sizeof(arg));
		c->force = force && strcmp(force, "1") == 0 && !c->readonly;
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		c->established = true;
		return attach(wsi, c);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (c->note) {
			size_t n = strlen(c->note);
			unsigned char *buf = malloc(LWS_PRE + n);

			if (buf) {
				memcpy(buf + LWS_PRE, c->note, n);
				lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
				free(buf);
			}
			if (!c->out_len) {
				lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
				return -1;
			}
		}
		if (c->out_len) {
			if (lws_write(wsi, c->out + LWS_PRE, c->out_len, LWS_WRITE_BINARY) < (int)c->out_len)
				return -1;
			c->out_len = 0;
			if (c->raw)
				lws_rx_flow_control(c->raw, 1);
			if (c->note)
				lws_callback_on_writable(wsi);
		}
		return 0;
	case LWS_CALLBACK_RECEIVE:
		c->frame_len = lws_is_first_fragment(wsi) ? len : c->frame_len + len;
		if (c->frame_len > CONSOLE_FRAME_MAX) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)"too large", 9);
			return -1;
		}
		if (!web_token_equal(c->session->id, c->sid)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)"logged out", 10);
			return -1;
		}
		/* A viewer's keys, and text frames (the page's own), go nowhere. */
		if (c->readonly || c->fd < 0 || !lws_frame_is_binary(wsi))
			return 0;
		if (write(c->fd, in, len) != (ssize_t)len)
			return -1;
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (c->established)
			detach(c);
		c->established = false;
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols web_console_protocol = { "lodge-console", console_cb, sizeof(struct console_conn),
						    CONSOLE_FRAME_MAX, 0, NULL, 0 };
const struct lws_protocols web_console_fd_protocol = { "lodge-console-fd", console_raw_cb, 0, 0, 0, NULL, 0 };
