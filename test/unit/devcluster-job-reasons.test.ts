// The Failed condition reasons the simulated job controller writes are kube's; pinned here.
import t from 'tap';
import { jobFailureReasons } from '../../devcluster/controllers/job-controller.js';
import { jobLabels } from '../../devcluster/resources/strategies-batch.js';

void t.test('job controller - failure reasons are kube 1.30 job controller reasons', (t) => {
  t.same(jobFailureReasons, {
    backoffLimitExceeded: 'BackoffLimitExceeded',
    deadlineExceeded: 'DeadlineExceeded',
    podFailurePolicy: 'PodFailurePolicy',
    failedIndexes: 'FailedIndexes',
    maxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
  });
  t.end();
});

void t.test('job strategy - the labels on a job pod template are kube 1.27+ labels', (t) => {
  t.same(Object.values(jobLabels).sort(), [
    'batch.kubernetes.io/controller-uid',
    'batch.kubernetes.io/job-name',
    'controller-uid',
    'job-name',
  ]);
  t.end();
});
