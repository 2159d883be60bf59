//! Data computed from other data: computed and virtual columns, their
//! backfills, materialized views, and the job records both run as.

pub(crate) mod computed;
pub(crate) mod job_follow;
pub(crate) mod jobs;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod views;
