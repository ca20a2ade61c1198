// First: on another Node.js, a native module would crash the service later without a reason.
import './node-version';
// Then tracing, when asked for, must run before the modules it instruments are loaded.
import './tracing/tracing';
import { serve } from './serve';

void serve();
