/**
 * Preloaded (`--import`) into the platform processes the tests start: their
 * standard input is a pipe from the test process, which nothing writes to.
 * When it closes (the test process exited or was killed, however abruptly)
 * this process shuts down gracefully, so no child outlives its test.
 */
process.stdin.on('data', () => {});
process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.once('error', () => process.kill(process.pid, 'SIGTERM'));
