//! TEMPORARY placeholder while the Deployment controller lands from its branch.
use std::sync::Arc;
use kubegen::controller::ControllerError;
use tokio_util::sync::CancellationToken;
use super::cluster::Cluster;
pub(crate) async fn run(_cluster: Arc<Cluster>, stop: CancellationToken) -> Result<(), ControllerError> {
    stop.cancelled().await;
    Ok(())
}
