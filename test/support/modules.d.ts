// The devDependencies `express4` (npm:express@4) and `koa2` (npm:koa@2) ship no types of their
// own; they are typed as the current majors, whose APIs the test apps use identically.

declare module 'express4' {
  import express = require('express');
  export = express;
}

declare module 'koa2' {
  import Koa = require('koa');
  export = Koa;
}

// parse-prometheus-text-format ships no types: the shapes the metrics test reads.
declare module 'parse-prometheus-text-format' {
  interface Sample {
    labels?: Record<string, string>;
    value?: string;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }
  interface Family {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
