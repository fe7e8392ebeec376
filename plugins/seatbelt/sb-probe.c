/* sb-probe.c: the seatbelt backend's probe: the facts of the host
 * (sb-host-<os>.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/kgate-plugin.h"
#include "sb-host.h"
#include "sb-profile.h"
#include "sb-watch.h"
#include "sb-internal.h"

int sb_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err)
{
    sb_host_probe(probe); /* sb-host-<os>.c */
    return 0;
}
