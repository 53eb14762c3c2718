//! Services (`pkg/registry/core/service/strategy.go` and `storage/alloc.go`): defaulting,
//! and the cluster IP and node ports the service REST storage reserves on create, keeps
//! across updates and hands back on delete.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::allocator::{AllocError, IpAllocator, PortAllocator};
use super::defaults::{at, default};
use super::{Finish, Strategy};
use crate::errors::Cause;

/// The Services strategy, with the cluster's IP and node port pools.
#[derive(Debug, Clone, Default)]
pub struct Services {
    ips: Arc<IpAllocator>,
    ports: Arc<PortAllocator>,
}

/// What a Service holds from the pools.
#[derive(Debug, Default, PartialEq)]
struct Held {
    ip: Option<String>,
    node_ports: Vec<i64>,
}

impl Held {
    fn of(svc: &Value) -> Held {
        let ip = cluster_ip(svc)
            .filter(|ip| needs_cluster_ip(svc) && *ip != "None")
            .map(str::to_owned);
        let node_ports = ports(svc)
            .iter()
            .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
            .filter(|n| *n != 0)
            .collect();
        Held { ip, node_ports }
    }

    /// What `self` holds and `other` does not.
    fn minus(&self, other: &Held) -> Held {
        Held {
            ip: self.ip.clone().filter(|ip| other.ip.as_ref() != Some(ip)),
            node_ports: self
                .node_ports
                .iter()
                .copied()
                .filter(|n| !other.node_ports.contains(n))
                .collect(),
        }
    }
}

fn svc_type(svc: &Value) -> &str {
    svc.pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

fn cluster_ip(svc: &Value) -> Option<&str> {
    svc.pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty())
}

fn ports(svc: &Value) -> &[Value] {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Every type but `ExternalName` gets a cluster IP (or is headless).
fn needs_cluster_ip(svc: &Value) -> bool {
    svc_type(svc) != "ExternalName"
}

/// `NodePort` Services, and `LoadBalancer` ones unless `allocateLoadBalancerNodePorts` is
/// false.
fn needs_node_ports(svc: &Value) -> bool {
    match svc_type(svc) {
        "NodePort" => true,
        "LoadBalancer" => svc
            .pointer("/spec/allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

/// Whether a Service has a selector (a headless one without gets every IP family).
fn has_selector(svc: &Value) -> bool {
    svc.pointer("/spec/selector")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

/// `alloc.go`'s error text for a value the pool refused.
fn refused(field: &str, value: &str, what: &str, err: &AllocError) -> Cause {
    let message = match err {
        AllocError::Full => format!("failed to allocate a {what}: {err}"),
        _ => format!("Invalid value: {value:?}: failed to allocate {what} {value}: {err}"),
    };
    Cause::invalid(field, message)
}

impl Services {
    fn release(&self, held: &Held) {
        if let Some(ip) = &held.ip {
            self.ips.release(ip);
        }
        for port in &held.node_ports {
            self.ports.release(*port);
        }
    }

    /// Fills in and reserves the cluster IP and the node ports `new` needs, keeping what
    /// `old` (an update's current object) already holds. Returns what was newly reserved.
    fn allocate(&self, new: &mut Value, old: Option<&Value>) -> Result<Held, Vec<Cause>> {
        let kept = old.map(Held::of).unwrap_or_default();
        let mut reserved = Held::default();
        let mut causes = Vec::new();
        let needs_ip = needs_cluster_ip(new);
        let needs_ports = needs_node_ports(new);
        let selector = has_selector(new);
        let old_ports: Vec<Value> = old
            .filter(|o| needs_node_ports(o))
            .map(|o| ports(o).to_vec())
            .unwrap_or_default();
        let Some(spec) = at(new, &["spec"]) else {
            return Ok(reserved);
        };
        if needs_ip {
            // `patchAllocatedValues`: an update that leaves the IP out keeps the old one.
            if let Some(old) = old.filter(|o| needs_cluster_ip(o)) {
                for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                    let unset = spec
                        .get(key)
                        .is_none_or(|v| v.is_null() || *v == json!("") || *v == json!([]));
                    if unset && let Some(v) = old.pointer(&format!("/spec/{key}")) {
                        spec.insert(key.into(), v.clone());
                    }
                }
            }
            let ip = spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if ip.is_empty() {
                match self.ips.allocate_next() {
                    Ok(ip) => {
                        spec.insert("clusterIP".into(), json!(ip.to_string()));
                        reserved.ip = Some(ip.to_string());
                    }
                    Err(err) => causes.push(refused("spec.clusterIPs", "", "serviceIP", &err)),
                }
            } else if ip != "None" && kept.ip.as_deref() != Some(ip.as_str()) {
                match self.ips.allocate(&ip) {
                    Ok(()) => reserved.ip = Some(ip.clone()),
                    Err(err) => causes.push(refused("spec.clusterIPs[0]", &ip, "IP", &err)),
                }
            }
            if let Some(ip) = spec.get("clusterIP").cloned() {
                spec.insert("clusterIPs".into(), json!([ip]));
            }
            default(spec, "ipFamilies", json!(["IPv4"]));
            let headless = spec.get("clusterIP") == Some(&json!("None"));
            let policy = if headless && !selector {
                "RequireDualStack"
            } else {
                "SingleStack"
            };
            default(spec, "ipFamilyPolicy", json!(policy));
        }
        if needs_ports && let Some(list) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for (i, port) in list.iter_mut().enumerate() {
                let Some(port) = port.as_object_mut() else {
                    continue;
                };
                let wanted = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
                if wanted == 0 {
                    let node_port =
                        previous_node_port(port, &old_ports)
                            .map(Ok)
                            .unwrap_or_else(|| {
                                let n = self.ports.allocate_next().map(i64::from)?;
                                reserved.node_ports.push(n);
                                Ok(n)
                            });
                    match node_port {
                        Ok(n) => {
                            port.insert("nodePort".into(), json!(n));
                        }
                        Err(err) => causes.push(refused(
                            &format!("spec.ports[{i}].nodePort"),
                            "",
                            "port",
                            &err,
                        )),
                    }
                } else if !kept.node_ports.contains(&wanted) {
                    match self.ports.allocate(wanted) {
                        Ok(()) => reserved.node_ports.push(wanted),
                        Err(err) => causes.push(Cause::invalid(
                            &format!("spec.ports[{i}].nodePort"),
                            format!("Invalid value: {wanted}: {err}"),
                        )),
                    }
                }
            }
        }
        if causes.is_empty() {
            Ok(reserved)
        } else {
            self.release(&reserved);
            Err(causes)
        }
    }

    /// The `Finish` of a create or update: on success hand back what `old` held and `new`
    /// no longer does, otherwise what this write reserved.
    fn finish(&self, reserved: Held, new: &Value, old: Option<&Value>) -> Option<Finish> {
        let dropped = old.map(|o| Held::of(o).minus(&Held::of(new)));
        let this = self.clone();
        Some(Box::new(move |committed| {
            if committed {
                if let Some(dropped) = dropped {
                    this.release(&dropped);
                }
            } else {
                this.release(&reserved);
            }
        }))
    }
}

/// The node port `old` gave the same port number and protocol (`alloc.go`
/// `patchAllocatedValues`: an update keeps node ports it leaves out).
fn previous_node_port(port: &Map<String, Value>, old_ports: &[Value]) -> Option<i64> {
    let protocol = |p: &Map<String, Value>| {
        p.get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP")
            .to_owned()
    };
    old_ports
        .iter()
        .filter_map(Value::as_object)
        .find(|o| o.get("port") == port.get("port") && protocol(o) == protocol(port))
        .and_then(|o| o.get("nodePort").and_then(Value::as_i64))
        .filter(|n| *n != 0)
}

impl Strategy for Services {
    fn name(&self) -> &'static str {
        "services"
    }

    /// `SetDefaults_Service`: affinity, type, port protocols and target ports, traffic
    /// policies.
    fn apply_defaults(&self, obj: &mut Value) {
        let Some(spec) = at(obj, &["spec"]) else {
            return;
        };
        default(spec, "sessionAffinity", json!("None"));
        default(spec, "type", json!("ClusterIP"));
        let kind = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                default(port, "protocol", json!("TCP"));
                let unset = port
                    .get("targetPort")
                    .is_none_or(|t| t.is_null() || *t == json!(0) || *t == json!(""));
                if unset && let Some(p) = port.get("port").cloned() {
                    port.insert("targetPort".into(), p);
                }
            }
        }
        if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
            default(spec, "internalTrafficPolicy", json!("Cluster"));
        }
        if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
            default(spec, "externalTrafficPolicy", json!("Cluster"));
        }
    }

    fn begin_create(&self, obj: &mut Value) -> Result<Option<Finish>, Vec<Cause>> {
        let reserved = self.allocate(obj, None)?;
        Ok(self.finish(reserved, obj, None))
    }

    fn begin_update(&self, new: &mut Value, old: &Value) -> Result<Option<Finish>, Vec<Cause>> {
        let reserved = self.allocate(new, Some(old))?;
        Ok(self.finish(reserved, new, Some(old)))
    }

    fn after_delete(&self, obj: &Value) {
        self.release(&Held::of(obj));
    }

    /// `ValidateServiceUpdate`: a cluster IP, once set, stays.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<Cause> {
        match (cluster_ip(new), cluster_ip(old)) {
            (Some(n), Some(o)) if n != o && needs_cluster_ip(new) && needs_cluster_ip(old) => {
                vec![Cause::invalid(
                    "spec.clusterIPs[0]",
                    format!("Invalid value: {n:?}: may not change once set"),
                )]
            }
            _ => Vec::new(),
        }
    }

    /// service/storage/storage.go answers DELETE with the Service.
    fn returns_deleted_object(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pkg/apis/core/v1/defaults.go `SetDefaults_Service`.
    #[test]
    fn services_are_defaulted() {
        let mut svc =
            json!({"spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https"}]}});
        Services::default().apply_defaults(&mut svc);
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(
            svc["spec"]["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
        assert_eq!(svc["spec"]["ports"][1]["targetPort"], "https");
        assert_eq!(svc["spec"]["internalTrafficPolicy"], "Cluster");
        assert!(svc["spec"].get("externalTrafficPolicy").is_none());
    }

    fn create(s: &Services, mut svc: Value) -> Result<Value, Vec<Cause>> {
        let finish = s.begin_create(&mut svc)?;
        if let Some(f) = finish {
            f(true);
        }
        Ok(svc)
    }

    /// storage/alloc.go: a ClusterIP Service gets an address, a headless one none, a
    /// NodePort one node ports; a taken address is a 422 cause.
    #[test]
    fn creates_reserve_cluster_ips_and_node_ports() {
        let s = Services::default();
        let a = create(&s, json!({"spec": {"ports": [{"port": 80}]}})).expect("a");
        assert_eq!(a["spec"]["clusterIP"], "10.96.1.0");
        assert_eq!(a["spec"]["clusterIPs"], json!(["10.96.1.0"]));
        assert_eq!(a["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(a["spec"]["ipFamilyPolicy"], "SingleStack");
        assert!(a["spec"]["ports"][0].get("nodePort").is_none());
        let headless = create(&s, json!({"spec": {"clusterIP": "None"}})).expect("headless");
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
        let np = create(
            &s,
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81, "nodePort": 30001}]}}),
        )
        .expect("nodeport");
        assert_eq!(np["spec"]["clusterIP"], "10.96.1.1");
        assert_eq!(np["spec"]["ports"][0]["nodePort"], 30086);
        assert_eq!(np["spec"]["ports"][1]["nodePort"], 30001);
        let taken = create(&s, json!({"spec": {"clusterIP": "10.96.1.0"}})).expect_err("taken");
        assert_eq!(taken[0].field, "spec.clusterIPs[0]");
        assert!(
            taken[0]
                .message
                .contains("provided IP is already allocated"),
            "{taken:?}"
        );
        let external = create(
            &s,
            json!({"spec": {"type": "ExternalName", "externalName": "a.b"}}),
        )
        .expect("external");
        assert!(external["spec"].get("clusterIP").is_none());
    }

    /// A create that does not commit (dry run, failed admission) hands its reservations
    /// back; a delete hands back everything.
    #[test]
    fn aborted_creates_and_deletes_release() {
        let s = Services::default();
        let mut svc = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        let finish = s.begin_create(&mut svc).expect("create").expect("finish");
        finish(false);
        let again = create(
            &s,
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}}),
        )
        .expect("again");
        assert_eq!(again, svc);
        s.after_delete(&again);
        let third = create(&s, json!({"spec": {"clusterIP": "10.96.1.0"}})).expect("third");
        assert_eq!(third["spec"]["clusterIP"], "10.96.1.0");
    }

    /// alloc.go `patchAllocatedValues`: an update leaving out the IP and node ports keeps
    /// them; changing the IP is invalid; dropping to ClusterIP frees the node ports.
    #[test]
    fn updates_keep_what_the_service_holds() {
        let s = Services::default();
        let old = create(
            &s,
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}}),
        )
        .expect("old");
        let mut new = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        let finish = s.begin_update(&mut new, &old).expect("update");
        if let Some(f) = finish {
            f(true);
        }
        assert_eq!(new, old);
        let moved = json!({"spec": {"clusterIP": "10.96.9.9"}});
        assert_eq!(
            s.validate_update(&moved, &old)[0].field,
            "spec.clusterIPs[0]"
        );
        let mut plain = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
        let finish = s.begin_update(&mut plain, &old).expect("to ClusterIP");
        if let Some(f) = finish {
            f(true);
        }
        assert_eq!(plain["spec"]["clusterIP"], old["spec"]["clusterIP"]);
        let reuse = create(
            &s,
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30086}]}}),
        );
        assert!(reuse.is_ok(), "{reuse:?}");
    }
}
