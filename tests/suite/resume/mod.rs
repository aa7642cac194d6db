//! Sessions and resume.

mod resume_e2e;
mod resume_moved_e2e;
mod resume_trust_e2e;
mod resume_upload_e2e;
mod session_fold_e2e;
mod session_log_e2e;
mod session_resume;
