"""Step records of the 13-step pod creation flow (seed 000), across processes.

Every process records the steps that happen in it (see ``STEPS``) as
:class:`StepRecord`. The apiserver keeps them in a :class:`~controlplane.trace.buffer.TraceBuffer`
and serves them on ``/debug/controlplane/trace``; other components send theirs
there with :class:`~controlplane.trace.emitter.TraceEmitter`. Records of one flow
are linked by ownerReferences: a record carries its object's uid and the uids of
its controller owners, so a client can follow Deployment -> ReplicaSet -> Pod.
"""

from controlplane.trace.record import STEPS, StepRecord, make_record  # noqa: F401
