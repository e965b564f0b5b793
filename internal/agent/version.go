package agent

// Version is the agent's semantic version, sent as agentVersion in every
// report so the server can tell agent generations apart. From 2.7.0 the
// agent performs each assignment's action (run, reboot, recreate, stop) and
// reports a stopped workload gone: the server sends teardowns only to such
// agents (nodes.MinAgentTeardown).
const Version = "2.7.0"
