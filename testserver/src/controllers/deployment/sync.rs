//! One sync of one Deployment, planned without I/O (kubernetes
//! `pkg/controller/deployment/deployment_controller.go` `syncDeployment`, with
//! `pkg/controller/deployment/sync.go` `sync`, `syncStatusOnly`,
//! `getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`, `scaleReplicaSet`,
//! `cleanupDeployment`, `rolling.go` `rolloutRolling`, `recreate.go` `rolloutRecreate`).
//!
//! kube-controller-manager writes as it goes (an annotation update here, a scale there, a
//! status update in between) and re-reads nothing: each step works on the copies the
//! previous ones returned. [`plan`] runs the same steps on working copies of the
//! Deployment and its ReplicaSets and returns the writes that take the cluster from the
//! cached state to the result ([`Plan`]): at most one create, one update per changed
//! ReplicaSet, the deletes of the revision history cleanup, the Deployment's revision
//! annotation and its status. The intermediate status updates Go makes (the
//! `FoundNewReplicaSet` / `NewReplicaSetCreated` condition, the paused conditions) are folded
//! into the one final status.
//!
//! Status counts are computed from the working copies, so a scale planned in this sync is
//! already reflected in `unavailableReplicas` (Go counts the copies from before the scale
//! and catches up on the next sync).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};

use super::{
    claim, hash, history, recreate,
    replicasets::{self as rs},
    rolling::{self, Counts, InvalidIntOrPercent},
    scale,
    spec::{self, Strategy},
    status::{self, PROGRESSING},
};
use crate::controllers::compat::Opt;

/// A Deployment the controller cannot sync as it stands (the server's validation rejects
/// these; a test can still build one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SyncError {
    /// `spec.strategy.type` is neither `RollingUpdate` nor `Recreate`.
    #[error("unexpected deployment strategy type: {0}")]
    UnknownStrategy(String),
    /// `maxSurge` or `maxUnavailable` is not an integer or a percentage.
    #[error(transparent)]
    InvalidIntOrPercent(#[from] InvalidIntOrPercent),
}

/// The writes one sync makes, in order; see the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Plan {
    /// The new ReplicaSet to create.
    pub create: Option<ReplicaSet>,
    /// The ReplicaSets to update (the cached objects, changed; their resourceVersion makes
    /// the update conditional).
    pub updates: Vec<ReplicaSet>,
    /// The old ReplicaSets to delete (revision history beyond the limit).
    pub deletes: Vec<ReplicaSet>,
    /// The Deployment's new `deployment.kubernetes.io/revision`, if it changes.
    pub revision: Option<String>,
    /// The Deployment's new status, if it changes.
    pub status: Option<DeploymentStatus>,
    /// When to look again for the progress deadline.
    pub requeue_after: Option<Duration>,
    /// The ReplicaSets the plan resizes, for the `ScalingReplicaSet` events.
    pub scaled: Vec<Scaled>,
}

/// One ReplicaSet resized by a plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scaled {
    /// The ReplicaSet's name.
    pub name: String,
    /// Its size before (0 for a new one).
    pub from: i32,
    /// Its size after.
    pub to: i32,
}

impl Scaled {
    /// The event message (`scaleReplicaSet`'s "Scaled up replica set web-5d4b from 1 to
    /// 3").
    pub(crate) fn message(&self) -> String {
        let direction = if self.to > self.from { "up" } else { "down" };
        format!(
            "Scaled {direction} replica set {} from {} to {}",
            self.name, self.from, self.to
        )
    }
}

impl Plan {
    /// Whether the plan writes nothing.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.create.is_none()
            && self.updates.is_empty()
            && self.deletes.is_empty()
            && self.revision.is_none()
            && self.status.is_none()
    }
}

/// The working state of one sync.
struct State<'a> {
    /// The Deployment as cached.
    original: &'a Deployment,
    /// The working copy (annotations and status change).
    d: Deployment,
    /// Working copies of the owned ReplicaSets, oldest first, then the created one.
    rss: Vec<ReplicaSet>,
    /// Which of `rss` changed.
    dirty: Vec<bool>,
    /// The sizes of `rss` as cached (the created one has none).
    sizes: Vec<i32>,
    /// The index of the ReplicaSet to create, if any.
    created: Option<usize>,
    /// Indexes of `rss` to delete.
    deletes: Vec<usize>,
    /// The final status, once a path computed it.
    status: Option<DeploymentStatus>,
    /// The progress-deadline requeue, once a rollout path computed it.
    requeue_after: Option<Duration>,
    /// The time of this sync.
    now: Timestamp,
}

/// Plans one sync of `d` over the ReplicaSets it owns (`owned`, already claimed), at
/// `now`.
pub(crate) fn plan(
    d: &Deployment,
    mut owned: Vec<ReplicaSet>,
    now: Timestamp,
) -> Result<Plan, SyncError> {
    owned.sort_by(rs::by_creation);
    let mut state = State {
        original: d,
        d: d.clone(),
        dirty: vec![false; owned.len()],
        sizes: owned.iter().map(rs::spec_replicas).collect(),
        rss: owned,
        created: None,
        deletes: Vec::new(),
        status: None,
        requeue_after: None,
        now,
    };
    state.sync_deployment()?;
    Ok(state.finish())
}

impl State<'_> {
    /// `syncDeployment`, after the ReplicaSets are claimed.
    fn sync_deployment(&mut self) -> Result<(), SyncError> {
        let selector = self
            .d
            .spec
            .opt()
            .map(|s| s.selector.clone())
            .unwrap_or_default();
        if claim::is_empty(&selector) {
            // `SelectingAll`: refuse to act, but say the generation was seen.
            let mut status = spec::status(&self.d);
            if status.observed_generation.unwrap_or(0) < spec::generation(&self.d) {
                status.observed_generation = Some(spec::generation(&self.d));
            }
            self.status = Some(status);
            return Ok(());
        }
        if self.d.metadata.deletion_timestamp.is_some() {
            self.sync_status_only()?;
            return Ok(());
        }
        status::check_paused(&mut self.d, self.now);
        if spec::paused(&self.d) {
            return self.sync();
        }
        let (new, old) = self.get_all(false)?;
        let all: Vec<&ReplicaSet> = old
            .iter()
            .chain(new.as_ref())
            .map(|&i| &self.rss[i])
            .collect();
        if scale::is_scaling_event(&self.d, &all) {
            return self.sync();
        }
        match spec::strategy(&self.d) {
            Strategy::Recreate => self.rollout_recreate(),
            Strategy::RollingUpdate { .. } => self.rollout_rolling(),
            Strategy::Unknown(other) => Err(SyncError::UnknownStrategy(other)),
        }
    }

    /// `syncStatusOnly`: a Deployment being deleted only has its status kept up.
    fn sync_status_only(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all(false)?;
        self.status = Some(self.calculate_status(new, &old));
        Ok(())
    }

    /// `sync`: scaling (paused, or a replica count change), cleanup when paused, status.
    fn sync(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all(false)?;
        let plan = {
            let all: Vec<&ReplicaSet> = self.rss.iter().collect();
            scale::plan(&self.d, &all, new, &old)
        };
        for step in plan {
            if step.always {
                self.scale(step.index, step.replicas);
            } else {
                self.scale_and_record(step.index, step.replicas);
            }
        }
        if spec::paused(&self.d) {
            self.cleanup(&old);
        }
        self.status = Some(self.calculate_status(new, &old));
        Ok(())
    }

    /// `rolloutRolling`: create the new ReplicaSet if needed, scale it up as far as the
    /// surge allows; if it did not move, scale the old ones down as far as availability
    /// allows; if nothing moved and the rollout is complete, clean up the history.
    fn rollout_rolling(&mut self) -> Result<(), SyncError> {
        let (new, old) = self.get_all(true)?;
        if let Some(new) = new {
            let scaled_up = self.reconcile_new(new, &old)?;
            if !scaled_up {
                let scaled_down = self.reconcile_old(new, &old);
                if !scaled_down && self.complete_before() {
                    self.cleanup(&old);
                }
            }
        }
        self.rollout_status(new, &old);
        Ok(())
    }

    /// `reconcileNewReplicaSet`: whether the new ReplicaSet was scaled.
    fn reconcile_new(&mut self, new: usize, old: &[usize]) -> Result<bool, SyncError> {
        let replicas = spec::replicas(&self.d);
        let current = rs::spec_replicas(&self.rss[new]);
        if current == replicas {
            return Ok(false);
        }
        if current > replicas {
            return Ok(self.scale_and_record(new, replicas));
        }
        let all_spec = self.spec_total(old.iter().copied().chain([new]));
        let wanted = self.new_rs_new_replicas(all_spec, current)?;
        Ok(self.scale_and_record(new, wanted))
    }

    /// `reconcileOldReplicaSets` (see [`rolling::reconcile_old`]): whether any old
    /// ReplicaSet was scaled down.
    fn reconcile_old(&mut self, new: usize, old: &[usize]) -> bool {
        let active: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| rs::spec_replicas(&self.rss[i]) > 0)
            .collect();
        let counts: Vec<Counts> = active.iter().map(|&i| self.counts(i)).collect();
        let all_spec = self.spec_total(old.iter().copied().chain([new]));
        let sizes = rolling::reconcile_old(
            spec::replicas(&self.d),
            rolling::max_unavailable(&self.d),
            all_spec,
            self.counts(new),
            &counts,
        );
        let mut scaled = false;
        for (index, size) in active.into_iter().zip(sizes) {
            scaled |= self.scale_and_record(index, size);
        }
        scaled
    }

    /// `rolloutRecreate`, with the steps of [`recreate`].
    fn rollout_recreate(&mut self) -> Result<(), SyncError> {
        let (mut new, mut old) = self.get_all(false)?;
        let step = {
            let olds: Vec<&ReplicaSet> = old.iter().map(|&i| &self.rss[i]).collect();
            recreate::next_step(&olds)
        };
        match step {
            recreate::Step::ScaleDownOld => {
                for &index in &old {
                    if rs::spec_replicas(&self.rss[index]) > 0 {
                        self.scale_and_record(index, 0);
                    }
                }
            }
            recreate::Step::WaitForOldPods => {}
            recreate::Step::ScaleUpNew => {
                if new.is_none() {
                    (new, old) = self.get_all(true)?;
                }
                if let Some(index) = new {
                    self.scale_and_record(index, spec::replicas(&self.d));
                }
                if self.complete_before() {
                    self.cleanup(&old);
                }
            }
        }
        self.rollout_status(new, &old);
        Ok(())
    }

    /// `DeploymentComplete` against the Deployment's current status (the condition Go
    /// checks before cleaning up the history).
    fn complete_before(&self) -> bool {
        status::deployment_complete(&self.d, &spec::status(&self.d))
    }

    /// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created in the working set
    /// when `create` and missing) and the old ones, with the new one's annotations and the
    /// Deployment's revision brought up to date.
    fn get_all(&mut self, create: bool) -> Result<(Option<usize>, Vec<usize>), SyncError> {
        let found = rs::find_new(&self.d, &self.rss);
        let old: Vec<usize> = (0..self.rss.len()).filter(|&i| Some(i) != found).collect();
        let new_revision = rs::max_revision(old.iter().map(|&i| &self.rss[i])).saturating_add(1);
        let max_surge = rolling::max_surge(&self.d);
        if let Some(index) = found {
            let min_ready = spec::min_ready_seconds(&self.d);
            let d = &self.d;
            let r = &mut self.rss[index];
            let mut changed = rs::set_new_rs_annotations(d, r, new_revision, true, max_surge);
            let rs_spec = r.spec.opt_mut();
            if rs_spec.min_ready_seconds.unwrap_or(0) != min_ready {
                rs_spec.min_ready_seconds = Some(min_ready);
                changed = true;
            }
            if changed {
                self.dirty[index] = true;
            }
            let revision = rs::revision_text(&self.rss[index]);
            rs::set_deployment_revision(&mut self.d, &revision);
            let mut current = spec::status(&self.d);
            if spec::progress_deadline(&self.d).is_some()
                && status::get_condition(&current, PROGRESSING).is_none()
            {
                let message = format!("Found new replica set {:?}", rs::name(&self.rss[index]));
                status::set_condition(
                    &mut current,
                    status::condition(PROGRESSING, "True", status::FOUND_NEW_RS, message, self.now),
                );
                self.d.status = Some(current);
            }
            return Ok((found, old));
        }
        if !create {
            return Ok((None, old));
        }
        let collision_count = self.d.status.as_ref().and_then(|s| s.collision_count);
        let hash = hash::pod_template_hash(&rs::deployment_template(&self.d), collision_count);
        let mut new = rs::build_new(&self.d, &hash);
        let all_spec = self.spec_total(old.iter().copied());
        let replicas = self.new_rs_new_replicas(all_spec, 0)?;
        rs::set_spec_replicas(&mut new, replicas);
        rs::set_new_rs_annotations(&self.d, &mut new, new_revision, false, max_surge);
        let message = format!("Created new replica set {:?}", rs::name(&new));
        self.rss.push(new);
        self.dirty.push(true);
        let index = self.rss.len() - 1;
        self.created = Some(index);
        rs::set_deployment_revision(&mut self.d, &new_revision.to_string());
        if spec::progress_deadline(&self.d).is_some() {
            let mut current = spec::status(&self.d);
            status::set_condition(
                &mut current,
                status::condition(
                    PROGRESSING,
                    "True",
                    status::NEW_RS_CREATED,
                    message,
                    self.now,
                ),
            );
            self.d.status = Some(current);
        }
        Ok((Some(index), old))
    }

    /// `NewRSNewReplicas`: the new ReplicaSet's size under the strategy, given the sum of
    /// every ReplicaSet's `spec.replicas` (`all_spec`) and its current size.
    fn new_rs_new_replicas(&self, all_spec: i32, current: i32) -> Result<i32, SyncError> {
        let replicas = spec::replicas(&self.d);
        match spec::strategy(&self.d) {
            Strategy::RollingUpdate { max_surge, .. } => {
                let surge = rolling::scaled_value(&max_surge, replicas, true)?;
                Ok(rolling::new_rs_new_replicas(
                    replicas, surge, all_spec, current,
                ))
            }
            Strategy::Recreate => Ok(replicas),
            Strategy::Unknown(other) => Err(SyncError::UnknownStrategy(other)),
        }
    }

    /// The sum of `spec.replicas` of the ReplicaSets at `indexes`.
    fn spec_total(&self, indexes: impl Iterator<Item = usize>) -> i32 {
        rolling::clamp_i32(
            indexes
                .map(|i| i64::from(rs::spec_replicas(&self.rss[i])))
                .sum(),
        )
    }

    /// The replica counts of ReplicaSet `index`.
    fn counts(&self, index: usize) -> Counts {
        Counts {
            spec: rs::spec_replicas(&self.rss[index]),
            available: rs::available_replicas(&self.rss[index]),
        }
    }

    /// `scaleReplicaSetAndRecordEvent`: scales unless the size is already right; whether
    /// it scaled.
    fn scale_and_record(&mut self, index: usize, replicas: i32) -> bool {
        if rs::spec_replicas(&self.rss[index]) == replicas {
            return false;
        }
        self.scale(index, replicas)
    }

    /// `scaleReplicaSet`: sets the size and the replica annotations; whether the size
    /// changed.
    fn scale(&mut self, index: usize, replicas: i32) -> bool {
        let desired = spec::replicas(&self.d);
        let max = desired.saturating_add(rolling::max_surge(&self.d));
        let r = &mut self.rss[index];
        let resized = rs::spec_replicas(r) != replicas;
        rs::set_spec_replicas(r, replicas);
        let annotated = rs::set_replicas_annotations(r, desired, max);
        if resized || annotated {
            self.dirty[index] = true;
        }
        resized
    }

    /// `cleanupDeployment`: deletes the old ReplicaSets beyond the history limit.
    fn cleanup(&mut self, old: &[usize]) {
        let limit = spec::revision_history_limit(&self.d);
        let olds: Vec<&ReplicaSet> = old.iter().map(|&i| &self.rss[i]).collect();
        for position in history::to_delete(&olds, limit) {
            let index = old[position];
            if !self.deletes.contains(&index) {
                self.deletes.push(index);
            }
        }
    }

    /// `calculateStatus` over the working copies.
    fn calculate_status(&self, new: Option<usize>, old: &[usize]) -> DeploymentStatus {
        let all: Vec<&ReplicaSet> = old
            .iter()
            .chain(new.as_ref())
            .map(|&i| &self.rss[i])
            .collect();
        status::calculate_status(&self.d, &all, new.map(|i| &self.rss[i]), self.now)
    }

    /// `syncRolloutStatus` over the working copies, and the progress requeue.
    fn rollout_status(&mut self, new: Option<usize>, old: &[usize]) {
        let all: Vec<&ReplicaSet> = old
            .iter()
            .chain(new.as_ref())
            .map(|&i| &self.rss[i])
            .collect();
        let status = status::rollout_status(&self.d, &all, new.map(|i| &self.rss[i]), self.now);
        self.requeue_after = status::requeue_for_progress(&self.d, &status, self.now);
        self.status = Some(status);
    }

    /// The writes that take the cached state to the working one.
    fn finish(self) -> Plan {
        let original_status = spec::status(self.original);
        let status = self.status.filter(|s| *s != original_status);
        let revision_of = |d: &Deployment| {
            d.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(rs::REVISION))
                .cloned()
        };
        let revision =
            revision_of(&self.d).filter(|r| Some(r) != revision_of(self.original).as_ref());
        let mut plan = Plan {
            revision,
            status,
            requeue_after: self.requeue_after,
            ..Plan::default()
        };
        let deletes = self.deletes;
        for (index, (r, dirty)) in self.rss.into_iter().zip(self.dirty).enumerate() {
            let from = self.sizes.get(index).copied().unwrap_or(0);
            let to = rs::spec_replicas(&r);
            let resized = from != to && !deletes.contains(&index);
            if resized && (dirty || Some(index) == self.created) {
                plan.scaled.push(Scaled {
                    name: r.metadata.name.clone().unwrap_or_default(),
                    from,
                    to,
                });
            }
            if Some(index) == self.created {
                plan.create = Some(r);
            } else if deletes.contains(&index) {
                plan.deletes.push(r);
            } else if dirty {
                plan.updates.push(r);
            }
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::{
            apps::v1::{
                DeploymentSpec, DeploymentStrategy, ReplicaSetSpec, ReplicaSetStatus,
                RollingUpdateDeployment,
            },
            core::v1::{Container, PodSpec, PodTemplateSpec},
        },
        apimachinery::pkg::{
            apis::meta::v1::{LabelSelector, ObjectMeta, Time},
            util::intstr::IntOrString,
        },
    };

    use super::*;
    use crate::controllers::compat;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap_or_default()
    }

    fn labels() -> BTreeMap<String, String> {
        BTreeMap::from([("app".to_owned(), "web".to_owned())])
    }

    fn deployment(image: &str, replicas: i32) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".to_owned()),
                namespace: Some("default".to_owned()),
                uid: Some("d-uid".to_owned()),
                generation: Some(1),
                ..ObjectMeta::default()
            },
            spec: compat::field(DeploymentSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: Some(labels()),
                    match_expressions: None,
                },
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".to_owned()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(IntOrString::Int(1)),
                        max_unavailable: Some(IntOrString::Int(0)),
                    }),
                }),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels()),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "web".to_owned(),
                            image: Some(image.to_owned()),
                            ..Container::default()
                        }],
                        ..PodSpec::default()
                    }),
                },
                ..DeploymentSpec::default()
            }),
            status: None,
        }
    }

    /// What the API server and the ReplicaSet controller make of a planned create or
    /// update: a creation time, and a status with every pod running and available.
    fn settle(mut r: ReplicaSet, created: i64, available: bool) -> ReplicaSet {
        if r.metadata.creation_timestamp.is_none() {
            r.metadata.creation_timestamp = Some(Time(at(created)));
        }
        r.metadata.generation = Some(1);
        let replicas = rs::spec_replicas(&r);
        r.status = Some(ReplicaSetStatus {
            replicas,
            ready_replicas: Some(if available { replicas } else { 0 }),
            available_replicas: Some(if available { replicas } else { 0 }),
            observed_generation: Some(1),
            ..ReplicaSetStatus::default()
        });
        r
    }

    /// Applies a plan's Deployment writes.
    fn apply(d: &mut Deployment, plan: &Plan) {
        if let Some(revision) = &plan.revision {
            d.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(rs::REVISION.to_owned(), revision.clone());
        }
        if let Some(status) = &plan.status {
            d.status = Some(status.clone());
        }
    }

    fn reason(d: &Deployment, type_: &str) -> Option<String> {
        status::get_condition(&spec::status(d), type_).and_then(|c| c.reason.clone())
    }

    #[test]
    fn a_new_deployment_creates_its_replica_set_at_full_size_with_revision_1() {
        let d = deployment("nginx:1", 3);
        let plan = match plan(&d, Vec::new(), at(0)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        let created = plan.create.clone().unwrap_or_default();
        assert!(rs::name(&created).starts_with("web-"));
        // No old pods: surge 1 over 0 -> min(3 + 1, 3) = 3.
        assert_eq!(rs::spec_replicas(&created), 3);
        assert_eq!(rs::revision(&created), Some(1));
        assert_eq!(plan.revision.as_deref(), Some("1"));
        let status = plan.status.clone().unwrap_or_default();
        assert_eq!(status.observed_generation, Some(1));
        let progressing = status::get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(progressing.reason.as_deref(), Some(status::NEW_RS_CREATED));
        assert_eq!(
            progressing.message,
            Some(format!("Created new replica set {:?}", rs::name(&created)))
        );
        assert!(plan.requeue_after.is_some());
    }

    /// Runs syncs, settling every planned write at once (pods all available when
    /// `available`), until a sync plans nothing; returns the Deployment and its sets.
    fn converge(
        mut d: Deployment,
        mut sets: Vec<ReplicaSet>,
        available: bool,
        start: i64,
    ) -> (Deployment, Vec<ReplicaSet>, usize) {
        for round in 0..50 {
            let now = start + round;
            let plan = match plan(&d, sets.clone(), at(now)) {
                Ok(plan) => plan,
                Err(err) => panic!("{err}"),
            };
            if plan.is_empty() {
                return (d, sets, usize::try_from(round).unwrap_or(0));
            }
            apply(&mut d, &plan);
            for updated in &plan.updates {
                if let Some(slot) = sets.iter_mut().find(|s| rs::name(s) == rs::name(updated)) {
                    *slot = settle(updated.clone(), 0, available);
                }
            }
            sets.retain(|s| !plan.deletes.iter().any(|x| rs::name(x) == rs::name(s)));
            if let Some(created) = plan.create {
                sets.push(settle(created, now, available));
            }
            // The ReplicaSet controller's status catches up with every spec.
            sets = sets.into_iter().map(|s| settle(s, 0, available)).collect();
        }
        panic!("no convergence");
    }

    #[test]
    fn a_rolling_update_converges_to_a_complete_rollout() {
        let (d, sets, _) = converge(deployment("nginx:1", 3), Vec::new(), true, 0);
        assert_eq!(
            reason(&d, PROGRESSING).as_deref(),
            Some(status::NEW_RS_AVAILABLE)
        );
        let mut d2 = d.clone();
        {
            let spec = d2.spec.opt_mut();
            spec.template = deployment("nginx:2", 3)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
        }
        d2.metadata.generation = Some(2);
        let (d2, sets, rounds) = converge(d2, sets, true, 100);
        assert!(rounds > 2, "a rolling update takes several steps");
        assert_eq!(sets.len(), 2);
        let new = sets
            .iter()
            .find(|s| rs::revision(s) == Some(2))
            .cloned()
            .unwrap_or_default();
        assert_eq!(rs::spec_replicas(&new), 3);
        let old = sets
            .iter()
            .find(|s| rs::revision(s) == Some(1))
            .cloned()
            .unwrap_or_default();
        assert_eq!(rs::spec_replicas(&old), 0);
        let status = spec::status(&d2);
        // kubectl rollout status's conditions for "successfully rolled out".
        assert!(status.observed_generation >= Some(2));
        assert_eq!(status.updated_replicas, Some(3));
        assert_eq!(status.replicas, Some(3));
        assert_eq!(status.available_replicas, Some(3));
        assert_eq!(
            reason(&d2, PROGRESSING).as_deref(),
            Some(status::NEW_RS_AVAILABLE)
        );
        assert_eq!(
            reason(&d2, status::AVAILABLE).as_deref(),
            Some(status::MINIMUM_REPLICAS_AVAILABLE)
        );
        assert_eq!(
            d2.metadata
                .annotations
                .unwrap_or_default()
                .get(rs::REVISION)
                .map(String::as_str),
            Some("2")
        );
    }

    #[test]
    fn a_rolling_update_never_exceeds_the_surge_or_drops_availability() {
        let (d, sets, _) = converge(deployment("nginx:1", 4), Vec::new(), true, 0);
        let mut d = d;
        {
            let spec = d.spec.opt_mut();
            spec.template = deployment("nginx:2", 4)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
        }
        let mut sets = sets;
        for round in 0..20 {
            let plan = match plan(&d, sets.clone(), at(200 + round)) {
                Ok(plan) => plan,
                Err(err) => panic!("{err}"),
            };
            if plan.is_empty() {
                break;
            }
            apply(&mut d, &plan);
            for updated in &plan.updates {
                if let Some(slot) = sets.iter_mut().find(|s| rs::name(s) == rs::name(updated)) {
                    *slot = settle(updated.clone(), 0, true);
                }
            }
            if let Some(created) = plan.create {
                sets.push(settle(created, 200 + round, true));
            }
            let total: i32 = sets.iter().map(rs::spec_replicas).sum();
            let available: i32 = sets.iter().map(rs::available_replicas).sum();
            assert!(total <= 5, "surge 1 over 4: {total}");
            assert!(available >= 4, "maxUnavailable 0: {available}");
        }
    }

    #[test]
    fn a_rollback_reuses_the_old_replica_set_with_a_new_revision_and_history() {
        let (d1, sets, _) = converge(deployment("nginx:1", 2), Vec::new(), true, 0);
        let mut d2 = d1.clone();
        {
            let spec = d2.spec.opt_mut();
            spec.template = deployment("nginx:2", 2)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
        }
        let (d2, sets, _) = converge(d2, sets, true, 100);
        let mut d3 = d2;
        {
            let spec = d3.spec.opt_mut();
            spec.template = deployment("nginx:1", 2)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
        }
        let (d3, sets, _) = converge(d3, sets, true, 200);
        assert_eq!(sets.len(), 2);
        let back = sets
            .iter()
            .find(|s| rs::revision(s) == Some(3))
            .cloned()
            .unwrap_or_default();
        let annotations = back.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations.get(rs::REVISION_HISTORY).map(String::as_str),
            Some("1")
        );
        assert_eq!(rs::spec_replicas(&back), 2);
        assert_eq!(
            d3.metadata
                .annotations
                .unwrap_or_default()
                .get(rs::REVISION)
                .map(String::as_str),
            Some("3")
        );
    }

    #[test]
    fn recreate_scales_down_waits_then_creates() {
        let mut d = deployment("nginx:1", 2);
        {
            let spec = d.spec.opt_mut();
            spec.strategy = Some(DeploymentStrategy {
                type_: Some("Recreate".to_owned()),
                rolling_update: None,
            });
        }
        let (d, sets, _) = converge(d, Vec::new(), true, 0);
        let mut d2 = d;
        {
            let spec = d2.spec.opt_mut();
            spec.template.spec = deployment("nginx:2", 2)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template
                .spec;
        }
        // First sync: old scaled to 0, nothing created.
        let first = match plan(&d2, sets.clone(), at(100)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(first.create.is_none());
        assert_eq!(first.updates.len(), 1);
        assert_eq!(rs::spec_replicas(&first.updates[0]), 0);
        // The old pods still terminate: spec 0 but status 2 -> wait.
        let mut draining = first.updates[0].clone();
        draining.status = sets[0].status.clone();
        let second = match plan(&d2, vec![draining.clone()], at(101)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(second.create.is_none() && second.updates.is_empty());
        // Gone: the new ReplicaSet comes at full size.
        let third = match plan(&d2, vec![settle(draining, 0, true)], at(102)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(third.create.as_ref().map(rs::spec_replicas), Some(2));
    }

    #[test]
    fn paused_deployments_scale_but_do_not_roll_out() {
        let (d, sets, _) = converge(deployment("nginx:1", 2), Vec::new(), true, 0);
        let mut paused = d;
        {
            let spec = paused.spec.opt_mut();
            spec.paused = Some(true);
            spec.replicas = Some(5);
            spec.template = deployment("nginx:2", 5)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
        }
        let plan = match plan(&paused, sets, at(100)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(plan.create.is_none());
        assert_eq!(plan.updates.len(), 1);
        assert_eq!(rs::spec_replicas(&plan.updates[0]), 5);
        let status = plan.status.unwrap_or_default();
        let progressing = status::get_condition(&status, PROGRESSING)
            .cloned()
            .unwrap_or_default();
        assert_eq!(progressing.reason.as_deref(), Some(status::PAUSED));
        assert_eq!(compat::text(&progressing.status), "Unknown");
    }

    #[test]
    fn a_replica_change_mid_rollout_scales_proportionally() {
        let (d, sets, _) = converge(deployment("nginx:1", 10), Vec::new(), true, 0);
        let mut d = d;
        {
            let spec = d.spec.opt_mut();
            spec.template = deployment("nginx:2", 10)
                .spec
                .opt()
                .cloned()
                .unwrap_or_default()
                .template;
            spec.strategy = None; // 25% / 25%: surge 3, unavailable 2
        }
        // One step of the rollout, pods of the new set not available yet.
        let step = match plan(&d, sets.clone(), at(100)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        let mut sets = sets;
        if let Some(created) = step.create.clone() {
            sets.push(settle(created, 100, false));
        }
        apply(&mut d, &step);
        let total: i32 = sets.iter().map(rs::spec_replicas).sum();
        assert_eq!(total, 13);
        {
            let spec = d.spec.opt_mut();
            spec.replicas = Some(20);
        }
        let scaled = match plan(&d, sets, at(101)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        let total: i32 = scaled.updates.iter().map(rs::spec_replicas).sum();
        assert_eq!(total, 25, "20 + surge 5, spread over both sets");
        assert_eq!(scaled.updates.len(), 2);
    }

    #[test]
    fn old_history_beyond_the_limit_is_deleted_once_complete() {
        let mut d = deployment("v0", 1);
        {
            let spec = d.spec.opt_mut();
            spec.revision_history_limit = Some(1);
        }
        let (mut d, mut sets, _) = converge(d, Vec::new(), true, 0);
        for (i, image) in ["v1", "v2", "v3"].into_iter().enumerate() {
            {
                let spec = d.spec.opt_mut();
                spec.template = deployment(image, 1)
                    .spec
                    .opt()
                    .cloned()
                    .unwrap_or_default()
                    .template;
            }
            let start = 100 * (i64::try_from(i).unwrap_or(0) + 1);
            (d, sets, _) = converge(d, sets, true, start);
        }
        // The new set and one old one.
        assert_eq!(sets.len(), 2);
    }

    #[test]
    fn an_empty_selector_only_records_the_generation() {
        let mut d = deployment("x", 1);
        {
            let spec = d.spec.opt_mut();
            spec.selector = LabelSelector::default();
        }
        let plan = match plan(&d, Vec::new(), at(0)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(plan.create.is_none());
        assert_eq!(plan.status.and_then(|s| s.observed_generation), Some(1));
    }

    #[test]
    fn a_deleting_deployment_only_syncs_status() {
        let mut d = deployment("x", 1);
        d.metadata.deletion_timestamp = Some(Time(at(0)));
        let plan = match plan(&d, Vec::new(), at(0)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(plan.create.is_none());
        assert!(plan.status.is_some());
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut d = deployment("x", -4);
        {
            let spec = d.spec.opt_mut();
            spec.strategy = Some(DeploymentStrategy {
                type_: Some("Sideways".to_owned()),
                rolling_update: None,
            });
        }
        assert!(matches!(
            plan(&d, Vec::new(), at(0)),
            Err(SyncError::UnknownStrategy(_))
        ));
        let mut d = deployment("x", 3);
        {
            let spec = d.spec.opt_mut();
            spec.strategy = Some(DeploymentStrategy {
                type_: None,
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(IntOrString::String("lots".to_owned())),
                    max_unavailable: None,
                }),
            });
        }
        assert!(matches!(
            plan(&d, Vec::new(), at(0)),
            Err(SyncError::InvalidIntOrPercent(_))
        ));
        // No spec at all: defaults, one replica.
        let bare = Deployment {
            metadata: deployment("x", 1).metadata,
            spec: Default::default(),
            status: None,
        };
        assert!(plan(&bare, Vec::new(), at(0)).is_ok());
        // An owned set without spec or status.
        let d = deployment("x", 1);
        let odd = ReplicaSet {
            metadata: ObjectMeta {
                name: Some("odd".to_owned()),
                ..ObjectMeta::default()
            },
            spec: compat::field(ReplicaSetSpec::default()),
            status: None,
        };
        assert!(plan(&d, vec![odd, ReplicaSet::default()], at(0)).is_ok());
    }

    #[test]
    fn a_stable_deployment_plans_nothing() {
        let (d, sets, _) = converge(deployment("nginx:1", 3), Vec::new(), true, 0);
        let again = match plan(&d, sets, at(10_000)) {
            Ok(plan) => plan,
            Err(err) => panic!("{err}"),
        };
        assert!(again.is_empty());
        assert_eq!(again.requeue_after, None);
    }
}
