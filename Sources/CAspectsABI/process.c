/* process.c — aspects_process.h's calls that need _GNU_SOURCE. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include "aspects_process.h"

int aspects_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int aspects_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}
