// Package instancetypes is the instance type catalog a user creates VMs and
// pods from (GPU model × count with the CPU, RAM and disk share that goes
// with them, and the price per hour, in the manner of Lambda Cloud's
// gpu_8x_h100_sxm5), for both faces: any authenticated caller reads it; an
// operator (auth.NodesAdmin) writes it. Types are data: the data set loads
// them (the fixture's instanceTypes) and the operator keeps them.
package instancetypes
