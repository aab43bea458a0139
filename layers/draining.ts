/**
 * Whether this process is draining: it got SIGTERM and waits `[gateway] drain_delay_ms` before
 * its listener closes. Meanwhile `GET /health` answers 503 `draining`, so that a load balancer
 * takes the instance out, while requests still arriving are served (with `Connection: close`,
 * so that keep-alive clients reconnect to another instance). One server per process: the state
 * is the process's.
 */
let draining = false

export const startDraining = (): void => {
  draining = true
}

export const isDraining = (): boolean => draining
