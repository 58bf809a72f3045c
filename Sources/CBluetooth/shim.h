#ifndef BAREBLE_CBLUETOOTH_SHIM_H
#define BAREBLE_CBLUETOOTH_SHIM_H

/* libbluetooth-dev's kernel ABI headers, plus static inline wrappers for the function-like
   macros and constants Swift cannot import. Nothing here links against libbluetooth. */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>
#include <bluetooth/hci_lib.h>
#include <stdlib.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <errno.h>

static inline unsigned long bareble_HCIDEVUP(void) { return HCIDEVUP; }
static inline unsigned long bareble_HCIDEVDOWN(void) { return HCIDEVDOWN; }
static inline unsigned long bareble_HCIDEVRESET(void) { return HCIDEVRESET; }
static inline unsigned long bareble_HCIGETDEVLIST(void) { return HCIGETDEVLIST; }
static inline unsigned long bareble_HCIGETDEVINFO(void) { return HCIGETDEVINFO; }

static inline int bareble_ioctl_int(int fd, unsigned long request, int value) {
    return ioctl(fd, request, value);
}
static inline int bareble_ioctl_ptr(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}

/* HCI_CHANNEL_* and the HCI filter helpers are macros or inline functions in hci.h. */
static inline unsigned short bareble_HCI_CHANNEL_RAW(void) { return HCI_CHANNEL_RAW; }
static inline unsigned short bareble_HCI_CHANNEL_USER(void) { return HCI_CHANNEL_USER; }
static inline unsigned short bareble_HCI_CHANNEL_MONITOR(void) { return HCI_CHANNEL_MONITOR; }
static inline unsigned short bareble_HCI_CHANNEL_CONTROL(void) { return HCI_CHANNEL_CONTROL; }
static inline unsigned short bareble_HCI_DEV_NONE(void) { return HCI_DEV_NONE; }

static inline void bareble_hci_filter_clear(struct hci_filter *filter) { hci_filter_clear(filter); }
static inline void bareble_hci_filter_all_ptypes(struct hci_filter *filter) { hci_filter_all_ptypes(filter); }
static inline void bareble_hci_filter_all_events(struct hci_filter *filter) { hci_filter_all_events(filter); }
static inline void bareble_hci_filter_set_ptype(int type, struct hci_filter *filter) { hci_filter_set_ptype(type, filter); }
static inline void bareble_hci_filter_set_event(int event, struct hci_filter *filter) { hci_filter_set_event(event, filter); }
static inline void bareble_hci_filter_set_opcode(int opcode, struct hci_filter *filter) { hci_filter_set_opcode(opcode, filter); }

static inline int bareble_hci_test_bit(int bit, const void *addr) { return hci_test_bit(bit, addr); }

/* struct hci_dev_list_req ends in a flexible array, which Swift cannot allocate: fill
   `out` with up to `max` entries and return how many, or -1 with errno set. */
static inline int bareble_hci_get_dev_list(int fd, struct hci_dev_req *out, int max) {
    if (max <= 0 || max > HCI_MAX_DEV) max = HCI_MAX_DEV;
    size_t size = sizeof(struct hci_dev_list_req) + (size_t)max * sizeof(struct hci_dev_req);
    struct hci_dev_list_req *list = calloc(1, size);
    if (list == NULL) return -1;
    list->dev_num = (uint16_t)max;
    int result = ioctl(fd, HCIGETDEVLIST, (void *)list);
    int count = -1;
    if (result == 0) {
        count = list->dev_num <= max ? list->dev_num : max;
        memcpy(out, list->dev_req, (size_t)count * sizeof(struct hci_dev_req));
    }
    free(list);
    return count;
}

static inline int bareble_HCI_MAX_DEV(void) { return HCI_MAX_DEV; }
static inline int bareble_hci_dev_info_is_up(const struct hci_dev_info *info) {
    return hci_test_bit(HCI_UP, &info->flags);
}
/* hci_dev_info.type packs the bus in bits 0-3 and the controller type in bits 4-5. */
static inline int bareble_hci_dev_info_bus(const struct hci_dev_info *info) { return info->type & 0x0f; }
static inline int bareble_hci_dev_info_controller_type(const struct hci_dev_info *info) { return (info->type >> 4) & 0x03; }

/* Whether a user channel (HCI_CHANNEL_USER) holds the adapter `fd` is bound to (a raw
   socket): the kernel refuses every bound ioctl with EBUSY while one does, and otherwise
   answers HCIGETCONNINFO for a zero address with ENOENT. No side effects, unlike trying to
   open a user channel. Returns 1 held, 0 not held, -1 with errno set. */
static inline int bareble_hci_held_by_user_channel(int fd) {
    size_t size = sizeof(struct hci_conn_info_req) + sizeof(struct hci_conn_info);
    struct hci_conn_info_req *request = calloc(1, size);
    if (request == NULL) return -1;
    request->type = ACL_LINK;
    int result = ioctl(fd, HCIGETCONNINFO, (void *)request);
    int saved = errno;
    free(request);
    if (result == 0) return 0;
    if (saved == EBUSY) return 1;
    if (saved == ENOENT) return 0;
    errno = saved;
    return -1;
}

/* A pty master (for tests and tools that stand in for a UART): opens /dev/ptmx, unlocks
   the slave and writes its path. Returns the master descriptor, or -1 with errno set.
   posix_openpt and friends are not visible to Swift without feature macros. */
static inline int bareble_open_pty_master(char *path, size_t length) {
    int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    int unlock = 0, number = -1;
    if (ioctl(master, TIOCSPTLCK, &unlock) != 0 || ioctl(master, TIOCGPTN, &number) != 0) {
        close(master);
        return -1;
    }
    snprintf(path, length, "/dev/pts/%d", number);
    return master;
}

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34+) is declared only under _GNU_SOURCE,
   which Swift's Glibc module does not define: declare it here so a spawned child (the
   virtual radio) inherits none of our descriptors. */
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int bareble_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/* The kernel's own time for each datagram (SO_TIMESTAMPNS: when the packet was queued, not
   when we read it), for the monitor channel. CMSG_FIRSTHDR and friends are macros Swift
   cannot import. */
#include <time.h>
static inline int bareble_enable_kernel_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}
/* recv() that also returns the datagram's SCM_TIMESTAMPNS in nanoseconds since the Unix
   epoch in *nanoseconds, or -1 there when none came with it. Returns what recv() would. */
static inline ssize_t bareble_recv_timestamped(int fd, void *buffer, size_t length, long long *nanoseconds) {
    struct iovec vector = { buffer, length };
    union { char bytes[CMSG_SPACE(sizeof(struct timespec)) + 64]; struct cmsghdr align; } control;
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *nanoseconds = -1;
    ssize_t count = recvmsg(fd, &message, 0);
    if (count < 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPNS
            && header->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec stamp;
            memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
            *nanoseconds = (long long)stamp.tv_sec * 1000000000LL + stamp.tv_nsec;
        }
    }
    return count;
}

#endif
