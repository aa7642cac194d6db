//! Schedules: cron parsing against references, the scheduler, exports of schedules.

mod cron_export;
mod cron_reference;
mod cron_validation;
#[allow(clippy::module_inception)]
mod schedule;
mod schedule_missed;
