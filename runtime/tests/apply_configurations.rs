//! The built-in API groups' generated apply configurations
//! (`kubegen::kubernetes::applyconfiguration`) against the test server's server-side
//! apply, through the built-in fake clientset: a Deployment with a container list keyed by
//! name (kube-apiserver's `+listType=map` on `containers`), two managers, extraction.
//! Behaviour from kubernetes.io/docs/reference/using-api/server-side-apply/ (field
//! management, conflicts, "Transferring ownership") and client-go's
//! `applyconfigurations/apps/v1/deployment.go` (`ExtractDeployment`).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use kubegen::applyconfig::ApplyParams;
use kubegen::kubernetes::applyconfiguration::apps::v1::{
    DeploymentApplyConfiguration, DeploymentSpecApplyConfiguration, extract_deployment,
};
use kubegen::kubernetes::applyconfiguration::core::v1::{
    ContainerApplyConfiguration, PodSpecApplyConfiguration, PodTemplateSpecApplyConfiguration,
};
use kubegen::kubernetes::applyconfiguration::meta::v1::{
    LabelSelectorApplyConfiguration, ObjectMetaApplyConfiguration,
};
use kubegen_testserver::fake::kubernetes::new_simple_clientset;

fn web(image: &str, replicas: i32) -> DeploymentApplyConfiguration {
    DeploymentApplyConfiguration::new("web", "default")
        .with_labels([("app", "web")])
        .with_spec(
            DeploymentSpecApplyConfiguration::new()
                .with_replicas(replicas)
                .with_selector(
                    LabelSelectorApplyConfiguration::new().with_match_labels([("app", "web")]),
                )
                .with_template(
                    PodTemplateSpecApplyConfiguration::new()
                        .with_metadata(
                            ObjectMetaApplyConfiguration::new().with_labels([("app", "web")]),
                        )
                        .with_spec(
                            PodSpecApplyConfiguration::new().with_containers([
                                ContainerApplyConfiguration::new()
                                    .with_name("app")
                                    .with_image(image),
                            ]),
                        ),
                ),
        )
}

#[tokio::test]
async fn a_deployments_apply_configuration_round_trips_through_extract() {
    let cs = new_simple_clientset();
    let deployments = cs.apps_v1().deployments("default");
    let owner = ApplyParams::new("deployer");
    let intent = web("nginx:1", 2);
    let d = deployments.apply(&intent, &owner).await.unwrap();
    assert_eq!(d.spec.replicas, Some(2));

    // Exactly the manager's fields come back, keyed list elements included.
    let extracted = extract_deployment(&d, "deployer").unwrap();
    assert_eq!(
        serde_json::to_value(&extracted).unwrap(),
        serde_json::to_value(&intent).unwrap()
    );
    // Re-applying the extracted intent is a no-op.
    let again = deployments.apply(&extracted, &owner).await.unwrap();
    assert_eq!(again.metadata.resource_version, d.metadata.resource_version);

    // An autoscaler takes `spec.replicas` (forced, as the HPA does); the deployer's
    // image and labels stay, and its extraction no longer holds replicas.
    let scale = DeploymentApplyConfiguration::new("web", "default")
        .with_spec(DeploymentSpecApplyConfiguration::new().with_replicas(5));
    let scaled = deployments
        .apply(&scale, &ApplyParams::new("autoscaler").force())
        .await
        .unwrap();
    let spec = &scaled.spec;
    assert_eq!(spec.replicas, Some(5));
    let containers = &spec.template.spec.as_ref().unwrap().containers;
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1"));
    let mine = extract_deployment(&scaled, "deployer").unwrap();
    assert_eq!(mine.spec.as_ref().unwrap().replicas, None);
    assert_eq!(extract_deployment(&scaled, "autoscaler").unwrap(), scale);

    // Read-modify-apply of its own fields: a new image, replicas left to the autoscaler.
    let mut update = mine;
    if let Some(c) = update
        .spec
        .as_mut()
        .and_then(|s| s.template.as_mut())
        .and_then(|t| t.spec.as_mut())
        .and_then(|p| p.containers.as_mut())
        .and_then(|c| c.first_mut())
    {
        c.image = Some("nginx:2".into());
    }
    let rolled = deployments.apply(&update, &owner).await.unwrap();
    let spec = &rolled.spec;
    assert_eq!(spec.replicas, Some(5));
    assert_eq!(
        spec.template.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref(),
        Some("nginx:2")
    );
}

/// `create_or_apply`: read-modify-apply of the manager's own fields; nothing is sent when
/// its intent is unchanged, and another manager's fields are never touched.
#[tokio::test]
async fn create_or_apply_changes_only_its_own_fields() {
    use kubegen::controllerutil::{OperationResult, create_or_apply};
    use kubegen::kubernetes::applyconfiguration::core::v1::ConfigMapApplyConfiguration;

    let cs = new_simple_clientset();
    let cms = kubegen::client::ResourceClient::namespaced(cs.client().clone(), "default");
    let params = ApplyParams::new("ctrl");
    let set = |key: &'static str, value: &'static str| {
        move |c: &mut ConfigMapApplyConfiguration| {
            c.data
                .get_or_insert_with(Default::default)
                .insert(key.into(), value.into());
            Ok::<_, std::convert::Infallible>(())
        }
    };
    let start = || ConfigMapApplyConfiguration::new("cfg", "default");

    let (cm, result) = create_or_apply(&cms, start(), &params, set("a", "1"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Created);
    assert_eq!(cm.data.unwrap()["a"], "1");

    let writes = || {
        cs.fake()
            .actions()
            .iter()
            .filter(|a| a.matches("patch", "configmaps"))
            .count()
    };
    let before = writes();
    let (_, result) = create_or_apply(&cms, start(), &params, set("a", "1"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(writes(), before, "an unchanged intent sends nothing");

    let other = ConfigMapApplyConfiguration::new("cfg", "default").with_data([("b", "2")]);
    cs.core_v1()
        .config_maps("default")
        .apply(&other, &ApplyParams::new("other"))
        .await
        .unwrap();

    let (cm, result) = create_or_apply(&cms, start(), &params, set("a", "2"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Updated);
    let data = cm.data.unwrap();
    assert_eq!((data["a"].as_str(), data["b"].as_str()), ("2", "2"));
}
