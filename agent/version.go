package agent

// Version is the agent's semantic version, sent as agentVersion in every
// report so the server can tell agent generations apart.
const Version = "2.6.1"
