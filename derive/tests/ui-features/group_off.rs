// kubegen's built-in API groups are cargo features, all off by default (this crate's
// dev-dependency on kubegen turns none on): every way into the `apps` group fails to
// compile with a message naming the feature.
use kubegen::kubernetes::clientset::versioned::Clientset;
use kubegen::kubernetes::informers::externalversions::SharedInformerFactory;
use kubegen::kubernetes::listers::apps::v1::DeploymentLister;

fn deployments(clientset: &Clientset, factory: &SharedInformerFactory) {
    let _ = clientset.apps_v1();
    let _ = factory.apps();
}

fn main() {}
