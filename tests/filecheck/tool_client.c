/* A client of tool_server.py (tests/filecheck/tool_server.py `client`), in C: lit runs one per
 * RUN-line tool, and a Python client spends ~35 ms of CPU starting where this spends ~1.
 *   tool_client SOCKET TOOL ARGS...
 * Protocol (tool_server.start/wait): connect; send b"f" with fds 0, 1, 2 (SCM_RIGHTS); then
 * length-prefixed (4 bytes, big-endian) messages: tool, cwd, environment ("K=V" joined by NUL),
 * the argument count in decimal, each argument; read the 4-byte big-endian exit status. */
#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static int send_all(int s, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t k = send(s, p, n, 0);
        if (k < 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_msg(int s, const void *data, size_t n) {
    uint32_t len = htonl((uint32_t)n);
    return send_all(s, &len, 4) || send_all(s, data, n);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: tool_client SOCKET TOOL ARGS...\n");
        return 2;
    }
    const char *tool = argv[2];
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (s < 0 || strlen(argv[1]) >= sizeof addr.sun_path) return perror("tool_client"), 1;
    strcpy(addr.sun_path, argv[1]);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) return perror("tool_client"), 1;
    int fds[3] = {0, 1, 2};
    char byte = 'f';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof fds)]; } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    if (sendmsg(s, &msg, 0) < 0) return perror("tool_client"), 1;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return perror("tool_client"), 1;
    size_t env_len = 0;
    for (char **e = environ; *e; e++) env_len += strlen(*e) + 1;
    char *env = malloc(env_len + 1), *p = env;
    for (char **e = environ; *e; e++) {
        size_t n = strlen(*e);
        if (p != env) *p++ = '\0';
        memcpy(p, *e, n);
        p += n;
    }
    char count[16];
    snprintf(count, sizeof count, "%d", argc - 3);
    if (send_msg(s, tool, strlen(tool)) || send_msg(s, cwd, strlen(cwd)) ||
        send_msg(s, env, (size_t)(p - env)) || send_msg(s, count, strlen(count)))
        return perror("tool_client"), 1;
    for (int i = 3; i < argc; i++)
        if (send_msg(s, argv[i], strlen(argv[i]))) return perror("tool_client"), 1;
    unsigned char st[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t k = recv(s, st + got, 4 - got, 0);
        if (k <= 0) {
            fprintf(stderr, "%s: the process died without an exit status\n", tool);
            return 1;
        }
        got += (size_t)k;
    }
    close(s);
    return (int)(int32_t)((uint32_t)st[0] << 24 | (uint32_t)st[1] << 16 | (uint32_t)st[2] << 8 | st[3]);
}
