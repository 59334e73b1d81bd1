// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "agent/convert.h"

static void from_api(const CUpti_ActivityAPI *a, struct agent_api *o)
{
	o->type = AGENT_REC_API;
	o->size = sizeof(*o);
	o->start_ns = a->start;
	o->end_ns = a->end;
	o->domain = a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? AGENT_API_DRIVER : AGENT_API_RUNTIME;
	o->cbid = a->cbid;
	o->pid = a->processId;
	o->tid = a->threadId;
	o->correlation = a->correlationId;
	o->ret = a->returnValue;
}

static void from_kernel(const CUpti_ActivityKernel10 *k, struct agent_kernel *o)
{
	o->type = AGENT_REC_KERNEL;
	o->size = sizeof(*o);
	o->start_ns = k->start;
	o->end_ns = k->end;
	o->device = k->deviceId;
	o->context = k->contextId;
	o->stream = k->streamId;
	o->correlation = k->correlationId;
	o->grid[0] = k->gridX;
	o->grid[1] = k->gridY;
	o->grid[2] = k->gridZ;
	o->block[0] = k->blockX;
	o->block[1] = k->blockY;
	o->block[2] = k->blockZ;
	o->dyn_shmem = k->dynamicSharedMemory;
	o->static_shmem = k->staticSharedMemory;
	o->registers = k->registersPerThread;
	o->graph_node_id = k->graphNodeId;
	o->graph_id = k->graphId;
	o->launch_type = k->launchType;
}

static void from_memcpy(const CUpti_ActivityMemcpy6 *m, struct agent_memcpy *o)
{
	o->type = AGENT_REC_MEMCPY;
	o->size = sizeof(*o);
	o->start_ns = m->start;
	o->end_ns = m->end;
	o->bytes = m->bytes;
	o->copy_kind = m->copyKind;
	o->src_kind = m->srcKind;
	o->dst_kind = m->dstKind;
	o->flags = m->flags;
	o->device = m->deviceId;
	o->context = m->contextId;
	o->stream = m->streamId;
	o->correlation = m->correlationId;
	o->graph_node_id = m->graphNodeId;
	o->graph_id = m->graphId;
	o->runtime_correlation = m->runtimeCorrelationId;
}

static void from_memset(const CUpti_ActivityMemset4 *m, struct agent_memset *o)
{
	o->type = AGENT_REC_MEMSET;
	o->size = sizeof(*o);
	o->start_ns = m->start;
	o->end_ns = m->end;
	o->bytes = m->bytes;
	o->value = m->value;
	o->memory_kind = m->memoryKind;
	o->device = m->deviceId;
	o->context = m->contextId;
	o->stream = m->streamId;
	o->correlation = m->correlationId;
	o->graph_node_id = m->graphNodeId;
	o->graph_id = m->graphId;
	o->flags = m->flags;
}

static void from_overhead(const CUpti_ActivityOverhead3 *v, struct agent_overhead *o)
{
	o->type = AGENT_REC_OVERHEAD;
	o->size = sizeof(*o);
	o->start_ns = v->start;
	o->end_ns = v->end;
	o->overhead_kind = v->overheadKind;
	o->object_kind = v->objectKind;
	if (v->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ||
	    v->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
		o->object_id[0] = v->objectId.pt.processId;
		o->object_id[1] = v->objectId.pt.threadId;
	} else {
		o->object_id[0] = v->objectId.dcs.deviceId;
		o->object_id[1] = v->objectId.dcs.contextId;
		o->object_id[2] = v->objectId.dcs.streamId;
	}
	o->correlation = v->correlationId;
}

__u32 convert__record(const CUpti_Activity *rec, union agent_any *out, const char **name)
{
	memset(out, 0, sizeof(*out));
	*name = NULL;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		from_api((const CUpti_ActivityAPI *)rec, &out->api);
		break;
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		from_kernel((const CUpti_ActivityKernel10 *)rec, &out->kernel);
		*name = ((const CUpti_ActivityKernel10 *)rec)->name;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		from_memcpy((const CUpti_ActivityMemcpy6 *)rec, &out->memcpy);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		from_memset((const CUpti_ActivityMemset4 *)rec, &out->memset);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		from_overhead((const CUpti_ActivityOverhead3 *)rec, &out->overhead);
		break;
	default:
		return 0;
	}
	return out->hdr.type;
}
