import { type OnModuleDestroy } from '@nestjs/common';
import { type Request, type RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { version } from '../../package.json';
import { declareScope } from '../auth/scopes';
import { type UnitOfWork } from '../database/unit-of-work';
import { routeTemplate } from '../logging/route-template';
import { type RepresentationCache } from '../wire';
import { EventLoopStalls } from './event-loop-stalls';

/** The path Prometheus scrapes. */
export const METRICS_PATH = '/metrics';

/** What a scraper needs for /metrics when METRICS is `protected`. */
export const METRICS_READ = declareScope(
  'metrics:read',
  'Scrape the Prometheus metrics at /metrics.',
);

/** Seconds: from a cached 304 (about a millisecond) to a request at the database's time bound. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The label of a request no API route answered (the OpenAPI UI, /metrics, a path nothing serves): its
 * path would make a series of every URL a client invents.
 */
const UNMATCHED = 'other';

/** The route template a request matched (`/api/Transaction/GetTransaction/:transaction_id`). */
function routeLabel(request: Request): string {
  const template = routeTemplate(request);
  return template === undefined ? UNMATCHED : `${request.baseUrl}${template}`;
}

interface RequestSeries {
  readonly requests: { inc(): void };
  readonly duration: { observe(value: number): void };
}

/**
 * The service's Prometheus metrics, in a registry of its own (one per application, so tests can run
 * several): requests by route and status with their durations, database connections by state,
 * lookups of the cached representations (GetRequirements), the longest hold of the event loop, the
 * build that runs (`property_sales_build_info`, as Prometheus' client conventions name it), and
 * Node.js's process metrics.
 */
export class ServiceMetrics implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly stalls = new EventLoopStalls();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly durations: Histogram<'method' | 'route' | 'status'>;
  private readonly series = new Map<string, RequestSeries>();

  constructor(unitOfWork: UnitOfWork, representations: RepresentationCache, commit: string) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'property_sales_build_info',
      help: 'Always 1: the version, source commit and Node.js release of the running build, as labels.',
      labelNames: ['version', 'commit', 'node'],
      registers,
    }).set({ version, commit, node: process.version }, 1);
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'From the request to the end of its response, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'database_connections',
      help: 'Database connections by state: in_use, idle, and waiting (units waiting for one).',
      labelNames: ['state'],
      registers,
      collect() {
        const usage = unitOfWork.poolUsage();
        this.set({ state: 'in_use' }, usage.inUse);
        this.set({ state: 'idle' }, usage.idle);
        this.set({ state: 'waiting' }, usage.waiting);
      },
    });
    new Gauge({
      name: 'database_node_in_use',
      help: 'With several nodes in DATABASE_URL: 1 for the node connections are taken from, else 0.',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const { node, state } of unitOfWork.nodes() ?? [])
          this.set({ node }, Number(state === 'in use'));
      },
    });
    new Gauge({
      name: 'database_node_serving',
      help: 'With several nodes in DATABASE_URL: 1 for a node that serves (reachable; on Galera Synced in the primary component), 0 for one left out.',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const { node, state } of unitOfWork.nodes() ?? [])
          this.set({ node }, Number(state !== 'out'));
      },
    });
    new Gauge({
      name: 'database_replica_serving',
      help: 'With DATABASE_READ_URLS: 1 for a read replica that takes reads, 0 for one left out (not answering, replication stopped, or further behind than DATABASE_REPLICA_MAX_LAG_SECONDS).',
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const { replica, state } of unitOfWork.replicas()?.replicas ?? [])
          this.set({ replica }, Number(state === 'serving'));
      },
    });
    new Gauge({
      name: 'database_replica_lag_seconds',
      help: "With DATABASE_READ_URLS: each read replica's Seconds_Behind_Master at its last check, where known (not while its replication is stopped, nor when its account may not ask).",
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const { replica, lagSeconds } of unitOfWork.replicas()?.replicas ?? [])
          if (typeof lagSeconds === 'number') this.set({ replica }, lagSeconds);
      },
    });
    new Gauge({
      name: 'database_replica_fallback',
      help: 'With DATABASE_READ_URLS: 1 while no read replica serves and reads go to the primary (DATABASE_REPLICA_FALLBACK=primary), else 0.',
      registers,
      collect() {
        this.set(Number(unitOfWork.replicas()?.reads === 'primary'));
      },
    });
    const { stalls } = this;
    new Gauge({
      name: 'event_loop_stall_max_seconds',
      help: 'The longest the event loop was held since the previous scrape (how late a 20 ms timer fired): every request waited that long.',
      registers,
      collect() {
        this.set(stalls.takeLongestSeconds());
      },
    });
    new Counter({
      name: 'representation_cache_lookups_total',
      help: 'Responses of a cached body (requirements: GetRequirements), served from the cache (hit) or encoded again (miss).',
      labelNames: ['body', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [body, { hits, misses }] of representations.lookups) {
          this.inc({ body, result: 'hit' }, hits);
          this.inc({ body, result: 'miss' }, misses);
        }
      },
    });
  }

  onModuleDestroy(): void {
    this.stalls.stop();
  }

  /** Counts and times every request, once its response has finished or its connection closed. */
  requestObserver(): RequestHandler {
    return (request, response, next) => {
      const started = process.hrtime.bigint();
      const done = () => {
        response.off('finish', done);
        response.off('close', done);
        const series = this.seriesOf(request.method, routeLabel(request), response.statusCode);
        series.requests.inc();
        series.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      };
      response.on('finish', done);
      response.on('close', done);
      next();
    };
  }

  /**
   * The request series of one method, route and status, kept: prom-client would hash the labels on
   * every request. Methods (Node's parser knows a few dozen), route templates and statuses are few.
   */
  private seriesOf(method: string, route: string, status: number): RequestSeries {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { requests: this.requests.labels(labels), duration: this.durations.labels(labels) };
      this.series.set(key, series);
    }
    return series;
  }

  /** Serves the metrics in Prometheus' text format. */
  handler(): RequestHandler {
    return (_request, response, next) => {
      this.registry.metrics().then((text) => {
        response.setHeader('Content-Type', this.registry.contentType);
        response.end(text);
      }, next);
    };
  }
}
