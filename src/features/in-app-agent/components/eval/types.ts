/** What the evaluation pages read, as the `agent.eval.*` procedures answer it. */
import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../host-client';

type Eval = inferRouterOutputs<AppRouter>['agent']['eval'];
export type DatasetList = Eval['datasets']['list'];
export type DatasetData = Eval['datasets']['get'];
export type ExperimentData = Eval['experiments']['get'];
export type ComparisonData = Eval['experiments']['compare'];
export type CaseResult = ExperimentData['results'][number];
