//! The `kubernetes` Service in `default`: how a pod finds the API server. kube-apiserver's
//! own bootstrap controller writes it at start
//! (`pkg/controlplane/controller/kubernetesservice/controller.go`,
//! `pkg/controlplane/reconcilers/endpointsadapter.go`): a selector-less `ClusterIP` Service
//! on the first address of the service range, port `https` 443 to the server's port, and
//! its endpoints (an `Endpoints` and an `EndpointSlice`, both named `kubernetes`) listing
//! the server's address.
//!
//! The cluster writes them once at start, before the controllers run; a test that deletes
//! them keeps them deleted (kube-apiserver would recreate them within ten seconds).

use std::net::SocketAddr;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::{
    core::v1::{Endpoints, Service},
    discovery::v1::EndpointSlice,
};
use kubegen::{
    Object,
    client::{Client, Error, ResourceClient, params::PostParams},
};
use serde_json::{Value, json};

/// The `kubernetes` Service's cluster IP: the first host address of the service range
/// (`--service-cluster-ip-range`, `10.96.0.0/12`), which the IP allocator never hands out
/// dynamically.
pub(crate) const CLUSTER_IP: &str = "10.96.0.1";

/// The Service, as kube-apiserver writes it.
fn service() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": CLUSTER_IP,
            "clusterIPs": [CLUSTER_IP],
            "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}],
        },
    })
}

/// The Service's endpoints: the server's address and port. A server on an unspecified
/// address (`0.0.0.0`) is reached on loopback.
fn endpoints(addr: SocketAddr) -> (Value, Value) {
    let ip = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let port = addr.port();
    let address_type = if addr.is_ipv6() { "IPv6" } else { "IPv4" };
    let endpoints = json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [{
            "addresses": [{"ip": ip}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }],
    });
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": "kubernetes"},
        },
        "addressType": address_type,
        "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    });
    (endpoints, slice)
}

/// Writes the `kubernetes` Service, Endpoints and EndpointSlice for a server at `addr`
/// (one already there is kept).
pub(crate) async fn register(client: &Client, addr: SocketAddr) -> Result<(), Error> {
    let mut svc = service();
    if let Some(port) = svc.pointer_mut("/spec/ports/0/targetPort") {
        *port = json!(addr.port());
    }
    let (endpoints, slice) = endpoints(addr);
    create::<Service>(client, svc).await?;
    create::<Endpoints>(client, endpoints).await?;
    create::<EndpointSlice>(client, slice).await
}

async fn create<K>(client: &Client, object: Value) -> Result<(), Error>
where
    K: Object + kube_core::Resource<Scope = NamespaceResourceScope>,
{
    let object: K = serde_json::from_value(object).map_err(Error::Decode)?;
    let resources: ResourceClient<K> = ResourceClient::namespaced(client.clone(), "default");
    match resources.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_point_at_the_server() {
        let (legacy, slice) = endpoints(SocketAddr::from(([0, 0, 0, 0], 6443)));
        assert_eq!(legacy["subsets"][0]["addresses"][0]["ip"], "127.0.0.1");
        assert_eq!(legacy["subsets"][0]["ports"][0]["port"], 6443);
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(slice["endpoints"][0]["addresses"][0], "127.0.0.1");
        let (_, slice) = endpoints(SocketAddr::from(([0u16, 0, 0, 0, 0, 0, 0, 1], 8443)));
        assert_eq!(slice["addressType"], "IPv6");
        assert_eq!(slice["endpoints"][0]["addresses"][0], "::1");
    }
}
