//! Real-world CRD type trees, written by hand after the CRD manifests in
//! `codegen/testdata/crds/` (cert-manager's Certificate, Gateway API's Gateway,
//! Prometheus Operator's ServiceMonitor, and a workload CRD embedding a
//! `PodTemplateSpec`). They embed many k8s-openapi types, `serde_json::Value`, and types
//! of other crates, as real operators' types do. `zz_generated_*.rs` files are generated:
//! regenerate them with `hack/update-codegen.sh`.

pub mod certmanager;
pub mod gateway;
pub mod monitoring;
pub mod workloads;
