// The chart toolbar and Plotly's own words in Simplified Chinese (the entries of plotly.js's
// dist/plotly-locale-zh-cn.js that our charts show), registered before report.js draws.
(function () {
  "use strict";
  if (!window.Plotly) return;
  window.Plotly.register({
    moduleType: "locale",
    name: "zh-CN",
    dictionary: {
      "Autoscale": "自动缩放",
      "Box Select": "矩形框选",
      "Click to enter Colorscale title": "单击输入色阶的标题",
      "Click to enter Plot title": "单击输入图表的标题",
      "Click to enter X axis title": "单击输入 X 轴的标题",
      "Click to enter Y axis title": "单击输入 Y 轴的标题",
      "Compare data on hover": "悬停时比较数据",
      "Double-click on legend to isolate one trace": "双击图例来突显对应轨迹",
      "Double-click to zoom back out": "双击返回缩小显示",
      "Download plot as a png": "下载图表为 PNG 格式",
      "Download plot": "下载图表",
      "Lasso Select": "套索选择",
      "Pan": "平移",
      "Reset axes": "重置轴",
      "Show closest data on hover": "悬停时显示最近的数据",
      "Snapshot succeeded": "生成快照成功",
      "Sorry, there was a problem downloading your snapshot!": "抱歉，下载快照出现问题！",
      "Taking snapshot - this may take a few seconds": "正在生成快照，可能需要几秒钟",
      "Toggle Spike Lines": "启用/禁用峰值线",
      "Zoom": "缩放",
      "Zoom in": "放大",
      "Zoom out": "缩小",
      "Reset view": "重置视图",
      "Toggle show closest data on hover": "启用/禁用悬停时显示最近的数据",
      "trace": "轨迹"
    },
    format: {
      days: ["星期日", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六"],
      shortDays: ["周日", "周一", "周二", "周三", "周四", "周五", "周六"],
      months: ["一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月", "十一月", "十二月"],
      shortMonths: ["1月", "2月", "3月", "4月", "5月", "6月", "7月", "8月", "9月", "10月", "11月", "12月"],
      date: "%Y-%m-%d"
    }
  });
})();
