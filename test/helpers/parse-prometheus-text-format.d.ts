// Types for the Prometheus text parser the /metrics test reads the scrape with (the package ships none).
declare module 'parse-prometheus-text-format' {
  export interface PromMetric {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PromFamily {
    name: string;
    help: string;
    type: string;
    metrics: PromMetric[];
  }
  export default function parse(text: string): PromFamily[];
}
