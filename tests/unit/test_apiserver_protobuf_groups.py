"""kubectl 1.32's protobuf bodies of the new API groups (bytes captured from the real kubectl) decode to the JSON object."""

from __future__ import annotations

from components.apiserver import protobuf

# `kubectl create job pb --image=busybox`
JOB = bytes.fromhex(
    "6b3873000a0f0a0862617463682f763112034a6f621281010a190a02706212001a0764656661756c7422002a0032003800420012"
    "5a32580a100a0012001a0022002a00320038004200124412210a027062120762757379626f782a0042006a007200800100880100"
    "900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000280030003a001a0022"
    "00"
)
# `kubectl create cronjob pbc --image=busybox --schedule="*/5 * * * *"`
CRONJOB = bytes.fromhex(
    "6b3873000a130a0862617463682f7631120743726f6e4a6f6212a8010a1a0a0370626312001a0764656661756c7422002a003200"
    "380042001287010a0b2a2f35202a202a202a202a1a002a760a130a0370626312001a0022002a00320038004200125f325d0a100a"
    "0012001a0022002a00320038004200124912220a03706263120762757379626f782a0042006a007200800100880100900100a201"
    "001a094f6e4661696c757265320042004a0052005800600068008201008a01009a0100c201001a001a002200"
)
# `kubectl create role pbr --verb=get,list --resource=pods`
ROLE = bytes.fromhex(
    "6b3873000a240a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311204526f6c6512310a1a0a0370627212"
    "001a0764656661756c7422002a0032003800420012130a036765740a046c69737412001a04706f64731a002200"
)
# `kubectl create clusterrole pbcr --verb=get --resource=nodes`
CLUSTERROLE = bytes.fromhex(
    "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512260a"
    "140a047062637212001a0022002a00320038004200120e0a0367657412001a056e6f6465731a002200"
)
# `kubectl create rolebinding pbrb --role=pbr --user=alice --serviceaccount=default:bot`
ROLEBINDING = bytes.fromhex(
    "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e67129301"
    "0a1b0a047062726212001a0764656661756c7422002a00320038004200122a0a04557365721219726261632e617574686f72697a"
    "6174696f6e2e6b38732e696f1a05616c696365220012200a0e536572766963654163636f756e7412001a03626f74220764656661"
    "756c741a260a19726261632e617574686f72697a6174696f6e2e6b38732e696f1204526f6c651a037062721a002200"
)
# `kubectl create clusterrolebinding pbcrb --clusterrole=pbcr --group=ops`
CLUSTERROLEBINDING = bytes.fromhex(
    "6b3873000a320a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311212436c7573746572526f6c6542696e"
    "64696e6712720a150a05706263726212001a0022002a0032003800420012290a0547726f75701219726261632e617574686f7269"
    "7a6174696f6e2e6b38732e696f1a036f707322001a2e0a19726261632e617574686f72697a6174696f6e2e6b38732e696f120b43"
    "6c7573746572526f6c651a04706263721a002200"
)
# `kubectl auth can-i create pods`
SSAR = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a6563744163636573735265"
    "76696577123f0a100a0012001a0022002a0032003800420012210a1f0a0764656661756c7412066372656174651a0022002a0470"
    "6f647332003a001a08080012001a0020001a002200"
)
# `kubectl auth whoami`
SSR = bytes.fromhex(
    "6b3873000a2d0a1861757468656e7469636174696f6e2e6b38732e696f2f7631121153656c665375626a65637452657669657712"
    "1a0a100a0012001a0022002a0032003800420012060a040a0012001a002200"
)
# `kubectl autoscale deployment pbd --max=3 --cpu-percent=60`
HPA_V1 = bytes.fromhex(
    "6b3873000a290a0e6175746f7363616c696e672f76311217486f72697a6f6e74616c506f644175746f7363616c6572123d0a130a"
    "0370626412001a0022002a0032003800420012200a1a0a0a4465706c6f796d656e7412037062641a07617070732f76311803203c"
    "1a04180020001a002200"
)

G = "rbac.authorization.k8s.io"


def test_job():
    assert protobuf.decode(JOB) == {"apiVersion": "batch/v1", "kind": "Job",
                                    "metadata": {"name": "pb", "namespace": "default"},
                                    "spec": {"template": {"spec": {"containers": [{"name": "pb", "image": "busybox"}],
                                                                   "restartPolicy": "Never"}}}}


def test_cronjob():
    cj = protobuf.decode(CRONJOB)
    assert cj["spec"]["schedule"] == "*/5 * * * *" and cj["spec"]["jobTemplate"]["metadata"] == {"name": "pbc"}
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_roles_and_bindings():
    assert protobuf.decode(ROLE)["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]
    assert protobuf.decode(CLUSTERROLE)["metadata"] == {"name": "pbcr"}
    rb = protobuf.decode(ROLEBINDING)
    assert rb["subjects"] == [{"kind": "User", "apiGroup": G, "name": "alice"},
                              {"kind": "ServiceAccount", "name": "bot", "namespace": "default"}]
    assert rb["roleRef"] == {"apiGroup": G, "kind": "Role", "name": "pbr"}
    crb = protobuf.decode(CLUSTERROLEBINDING)
    assert crb["subjects"] == [{"kind": "Group", "apiGroup": G, "name": "ops"}]
    assert crb["roleRef"] == {"apiGroup": G, "kind": "ClusterRole", "name": "pbcr"}


def test_reviews():
    assert protobuf.decode(SSAR) == {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                     "spec": {"resourceAttributes": {"namespace": "default", "verb": "create",
                                                                     "resource": "pods"}}}
    # kubectl sends an empty status.userInfo: decoded away, as JSON's omitempty would
    assert protobuf.decode(SSR) == {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def test_hpa_v1_message_is_chosen_by_version():
    assert protobuf.decode(HPA_V1) == {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "pbd"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "pbd", "apiVersion": "apps/v1"}, "maxReplicas": 3,
                 "targetCPUUtilizationPercentage": 60}}
